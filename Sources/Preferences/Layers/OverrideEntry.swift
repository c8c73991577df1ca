import Foundation

/// One value an override layer holds for a key.
struct OverrideValue: Sendable, Equatable {
    let source: PreferenceSource
    /// Where the value was found, for messages: `launch argument '-count'`.
    let origin: String
    /// The value as it was written, for messages.
    let text: String
    /// Its JSON readings, tried in order (see `OverrideText`).
    let readings: [Data]
}

/// A value named as the override layers name keys: `name` for the app's and the global namespace,
/// `namespace:name` for others.
struct NamedOverride: Sendable, Equatable {
    let name: String
    let value: OverrideValue
}

/// Every override layer's value for one key, top layer first, and what reading them found.
///
/// Replaced, never changed, when a layer changes, so a slot holding it needs no other invalidation.
final class OverrideEntry: Sendable {
    let values: [OverrideValue]
    /// The values a read may take: only the managed ones when the key is forced, so that a launch
    /// argument or environment variable never stands in for an administrator's value, even one
    /// that does not read.
    private let candidates: [OverrideValue]

    private struct Reading {
        /// The codec that read: held, so that no other can be made at its address.
        var codec: AnyObject
        /// The value that read, and its layer; `nil` when none read as the type.
        var value: (any Sendable)?
        var source: PreferenceSource?
    }

    /// The last codec read through, with its result: overrides rarely change, so each reads once.
    private let lastReading = Locked<Reading?>(nil)

    init(values: [OverrideValue]) {
        self.values = values
        let managed = values.filter { $0.source == .managed }
        candidates = managed.isEmpty ? values : managed
    }

    /// The managed setting for the key, if there is one: the key is then forced, and the app may
    /// not change it.
    ///
    /// Forced even when the setting does not read as the key's type: an administrator meant to lock it.
    var managedValue: OverrideValue? {
        values.first { $0.source == .managed }
    }

    /// The topmost value that reads as the key's type, and its layer; `nil` if none does.
    ///
    /// For a forced key, only the managed settings are read: when none reads, the key keeps its
    /// stored value or default.
    ///
    /// - Parameters:
    ///   - codec: The key's codec.
    ///   - report: Told of the values that do not read, the first time a type reads them.
    /// - Returns: The value and its layer, or `nil`.
    func read<Value>(
        with codec: KeyCodec<Value>,
        report: ([(OverrideValue, DecodeFailure)]) -> Void
    ) -> (value: Value, source: PreferenceSource)? {
        if let reading = lastReading.withLock({ $0 }), reading.codec === codec {
            guard let value = reading.value, let source = reading.source else { return nil }
            return (value as! Value, source)
        }
        var failures: [(OverrideValue, DecodeFailure)] = []
        var found: (value: Value, source: PreferenceSource)?
        search: for candidate in candidates {
            // The most telling failure: a reading that was of the type but broke a rule, else one
            // that said why it did not decode.
            var failure = DecodeFailure.mismatch
            for reading in candidate.readings {
                do throws(DecodeFailure) {
                    found = (try codec.decodeOverride(reading), candidate.source)
                    break search
                } catch {
                    switch (failure, error) {
                    case (.ruleBroken, _), (_, .mismatch): break
                    default: failure = error
                    }
                }
            }
            failures.append((candidate, failure))
        }
        lastReading.withLock { $0 = Reading(codec: codec, value: found?.value, source: found?.source) }
        if !failures.isEmpty {
            report(failures)
        }
        return found
    }

    /// Groups the layers' values by the keys they name in a store, top layer first.
    ///
    /// - Parameters:
    ///   - values: Every layer's values, the top layer's first.
    ///   - appNamespace: The store's name for the app's namespace.
    /// - Returns: Each key's values, top layer first.
    static func table(for values: [NamedOverride], appNamespace: String) -> [ResolvedKey: [OverrideValue]] {
        var table: [ResolvedKey: [OverrideValue]] = [:]
        for named in values {
            for key in resolvedKeys(named: named.name, appNamespace: appNamespace) {
                table[key, default: []].append(named.value)
            }
        }
        return table
    }

    /// The keys a layer's name stands for: a plain name is the app's key and the global one, and
    /// `namespace:name` is read as a ``StoredKey`` is written; a name that breaks the key rules,
    /// such as one in a reserved namespace, stands for none.
    private static func resolvedKeys(named name: String, appNamespace: String) -> [ResolvedKey] {
        guard name.contains(":") else {
            return [ResolvedKey(namespace: appNamespace, name: name), ResolvedKey(namespace: "", name: name)]
        }
        guard let key = StoredKey(parsing: name) else { return [] }
        return [ResolvedKey(namespace: key.namespace.resolved(appNamespace: appNamespace), name: key.name)]
    }
}
