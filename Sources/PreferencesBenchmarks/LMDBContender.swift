import Foundation

/// LMDB as the fastest embedded key-value stores are used, with no flush per commit.
///
/// Its memory map is written in place (`MDB_WRITEMAP`) and not flushed (`MDB_NOSYNC`), so that,
/// like this package's default durability, a commit survives the process being killed but not
/// power loss. One write transaction per write; each read renews one read-only transaction kept
/// for the purpose.
///
/// The system's `liblmdb` is loaded when the benchmark runs, as SQLite is (see ``LMDB/load()``).
final class LMDBContender: Contender {
    let name = "LMDB, writemap, no sync"
    private let library: LMDB
    private let environment: OpaquePointer
    private let database: UInt32
    private let reader: OpaquePointer

    /// What a key holds, as the benchmark names it: `int0`, `string0`, `pet0`, `theme0`.
    private enum Kind: Int, CaseIterable {
        case int, string, pet, theme
    }

    /// The keys' bytes by kind and index, made once by ``fill(count:)``: building a key's string on
    /// every operation would time Swift's string interpolation rather than LMDB.
    private var keys: [[[UInt8]]] = Kind.allCases.map { _ in [] }

    init(library: LMDB, path: String) throws {
        self.library = library
        environment = try library.createEnvironment(path: path, mapSize: 1 << 26)
        let setup = try library.begin(environment, readOnly: false)
        database = try library.openDatabase(setup)
        try library.commit(setup)
        reader = try library.begin(environment, readOnly: true)
        library.reset(reader)
    }

    deinit {
        library.abort(reader)
        library.close(environment)
    }

    private func key(_ kind: Kind, _ index: Int) -> [UInt8] {
        let made = keys[kind.rawValue]
        return index < made.count ? made[index] : Array("\(kind)\(index)".utf8)
    }

    /// Runs `body` in a write transaction, committed if it returns and aborted if it throws.
    private func inWriteTransaction(_ body: (OpaquePointer) throws -> Void) throws {
        let transaction = try library.begin(environment, readOnly: false)
        do {
            try body(transaction)
            try library.commit(transaction)
        } catch {
            library.abort(transaction)
            throw error
        }
    }

    private func put(_ value: Int, at key: [UInt8], in transaction: OpaquePointer) throws {
        try withUnsafeBytes(of: value) { try library.put(transaction, database, key: key, value: $0) }
    }

    private func put(_ text: String, at key: [UInt8], in transaction: OpaquePointer) throws {
        var text = text
        try text.withUTF8 { try library.put(transaction, database, key: key, value: UnsafeRawBufferPointer($0)) }
    }

    private func put(_ data: Data, at key: [UInt8], in transaction: OpaquePointer) throws {
        try data.withUnsafeBytes { try library.put(transaction, database, key: key, value: $0) }
    }

    /// Hands the value stored at `key` to `read`, or `nil` when there is none, inside a read
    /// transaction; the bytes are valid only until `read` returns.
    private func load<T>(_ key: [UInt8], _ read: (UnsafeRawBufferPointer?) -> T) -> T {
        guard library.renew(reader) else { return read(nil) }
        defer { library.reset(reader) }
        return read(library.get(reader, database, key: key))
    }

    private static func int(from bytes: UnsafeRawBufferPointer?) -> Int {
        guard let bytes, bytes.count == MemoryLayout<Int>.size else { return 0 }
        return bytes.loadUnaligned(as: Int.self)
    }

    private static func string(from bytes: UnsafeRawBufferPointer?) -> String {
        bytes.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    func write(_ value: Int, at index: Int) throws {
        try inWriteTransaction { try put(value, at: key(.int, index), in: $0) }
    }

    func readInt(at index: Int) -> Int {
        load(key(.int, index), Self.int(from:))
    }

    func write(_ value: String, stringAt index: Int) throws {
        try inWriteTransaction { try put(value, at: key(.string, index), in: $0) }
    }

    func readString(at index: Int) -> String {
        load(key(.string, index), Self.string(from:))
    }

    func write(_ value: BenchmarkPet, codableAt index: Int) throws {
        let json = try JSONEncoder().encode(value)
        try inWriteTransaction { try put(json, at: key(.pet, index), in: $0) }
    }

    func readCodable(at index: Int) -> BenchmarkPet {
        let json = load(key(.pet, index)) { $0.map { Data($0) } } ?? Data()
        return (try? JSONDecoder().decode(BenchmarkPet.self, from: json)) ?? .sample(-1)
    }

    func write(_ value: BenchmarkTheme, enumAt index: Int) throws {
        try inWriteTransaction { try put(value.rawValue, at: key(.theme, index), in: $0) }
    }

    func readEnum(at index: Int) -> BenchmarkTheme {
        BenchmarkTheme(rawValue: load(key(.theme, index), Self.string(from:))) ?? .system
    }

    func increment(at index: Int) throws {
        try inWriteTransaction { transaction in
            let current = Self.int(from: library.get(transaction, database, key: key(.int, index)))
            try put(current + 1, at: key(.int, index), in: transaction)
        }
    }

    func writeBatch(_ values: [Int]) throws {
        try inWriteTransaction { transaction in
            for (index, value) in values.enumerated() {
                try put(value, at: key(.int, index), in: transaction)
            }
        }
    }

    /// Stores `n` values of every kind in one transaction.
    func fill(count n: Int) throws {
        keys = Kind.allCases.map { kind in (0..<n).map { Array("\(kind)\($0)".utf8) } }
        let encoder = JSONEncoder()
        try inWriteTransaction { transaction in
            for index in 0..<n {
                try put(index, at: key(.int, index), in: transaction)
                try put(benchmarkString(index), at: key(.string, index), in: transaction)
                try put(try encoder.encode(BenchmarkPet.sample(index)), at: key(.pet, index), in: transaction)
                try put(BenchmarkTheme.dark.rawValue, at: key(.theme, index), in: transaction)
            }
        }
    }
}

/// The few functions of the system's LMDB the benchmark calls, looked up at run time.
struct LMDB: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// `MDB_val`: a size and a pointer, two words laid out in this order as in C.
    private struct Value {
        var size: Int
        var data: UnsafeMutableRawPointer?
    }

    // The flags used, from lmdb.h.
    private static let noSubdirectory: UInt32 = 0x4000
    private static let noSync: UInt32 = 0x10000
    private static let readOnly: UInt32 = 0x20000
    private static let writeMap: UInt32 = 0x80000
    private static let noThreadLocalStorage: UInt32 = 0x20_0000
    private static let create: UInt32 = 0x40000

    // The C signatures of the functions used.
    private typealias EnvironmentCreate = @convention(c) (UnsafeMutablePointer<OpaquePointer?>) -> Int32
    private typealias EnvironmentSetMapSize = @convention(c) (OpaquePointer, Int) -> Int32
    private typealias EnvironmentOpen = @convention(c) (OpaquePointer, UnsafePointer<CChar>, UInt32, UInt32) -> Int32
    private typealias EnvironmentClose = @convention(c) (OpaquePointer) -> Void
    private typealias TransactionBegin =
        @convention(c) (OpaquePointer, OpaquePointer?, UInt32, UnsafeMutablePointer<OpaquePointer?>) -> Int32
    private typealias OnTransaction = @convention(c) (OpaquePointer) -> Int32
    private typealias EndTransaction = @convention(c) (OpaquePointer) -> Void
    private typealias DatabaseOpen =
        @convention(c) (OpaquePointer, UnsafePointer<CChar>?, UInt32, UnsafeMutablePointer<UInt32>) -> Int32
    private typealias Put =
        @convention(c) (OpaquePointer, UInt32, UnsafeMutableRawPointer, UnsafeMutableRawPointer, UInt32) -> Int32
    private typealias Get =
        @convention(c) (OpaquePointer, UInt32, UnsafeMutableRawPointer, UnsafeMutableRawPointer) -> Int32
    private typealias ErrorText = @convention(c) (Int32) -> UnsafePointer<CChar>?

    private let environmentCreate: EnvironmentCreate
    private let environmentSetMapSize: EnvironmentSetMapSize
    private let environmentOpen: EnvironmentOpen
    private let environmentClose: EnvironmentClose
    private let transactionBegin: TransactionBegin
    private let transactionCommit: OnTransaction
    private let transactionRenew: OnTransaction
    private let transactionAbort: EndTransaction
    private let transactionReset: EndTransaction
    private let databaseOpen: DatabaseOpen
    private let putValue: Put
    private let getValue: Get
    private let errorText: ErrorText

    /// The system's LMDB, or `nil` when it is not installed.
    static func load() -> LMDB? {
        guard
            let library = SystemLibrary(anyOf: [
                "liblmdb.so.0", "liblmdb.so", "liblmdb.dylib", "/opt/homebrew/lib/liblmdb.dylib",
            ])
        else {
            return nil
        }
        guard let environmentCreate = library.function("mdb_env_create", as: EnvironmentCreate.self),
            let environmentSetMapSize = library.function("mdb_env_set_mapsize", as: EnvironmentSetMapSize.self),
            let environmentOpen = library.function("mdb_env_open", as: EnvironmentOpen.self),
            let environmentClose = library.function("mdb_env_close", as: EnvironmentClose.self),
            let transactionBegin = library.function("mdb_txn_begin", as: TransactionBegin.self),
            let transactionCommit = library.function("mdb_txn_commit", as: OnTransaction.self),
            let transactionRenew = library.function("mdb_txn_renew", as: OnTransaction.self),
            let transactionAbort = library.function("mdb_txn_abort", as: EndTransaction.self),
            let transactionReset = library.function("mdb_txn_reset", as: EndTransaction.self),
            let databaseOpen = library.function("mdb_dbi_open", as: DatabaseOpen.self),
            let putValue = library.function("mdb_put", as: Put.self),
            let getValue = library.function("mdb_get", as: Get.self),
            let errorText = library.function("mdb_strerror", as: ErrorText.self)
        else { return nil }
        return LMDB(
            environmentCreate: environmentCreate, environmentSetMapSize: environmentSetMapSize,
            environmentOpen: environmentOpen, environmentClose: environmentClose,
            transactionBegin: transactionBegin, transactionCommit: transactionCommit,
            transactionRenew: transactionRenew, transactionAbort: transactionAbort,
            transactionReset: transactionReset, databaseOpen: databaseOpen, putValue: putValue,
            getValue: getValue, errorText: errorText
        )
    }

    /// Opens the environment in one file at `path`, mapped writable, with no flush per commit.
    func createEnvironment(path: String, mapSize: Int) throws -> OpaquePointer {
        var environment: OpaquePointer?
        try check(environmentCreate(&environment), "mdb_env_create")
        guard let environment else { throw Failure(description: "LMDB made no environment") }
        do {
            try check(environmentSetMapSize(environment, mapSize), "mdb_env_set_mapsize")
            let flags = Self.noSubdirectory | Self.writeMap | Self.noSync | Self.noThreadLocalStorage
            try check(environmentOpen(environment, path, flags, 0o644), "mdb_env_open \(path)")
        } catch {
            environmentClose(environment)
            throw error
        }
        return environment
    }

    func close(_ environment: OpaquePointer) { environmentClose(environment) }

    func begin(_ environment: OpaquePointer, readOnly: Bool) throws -> OpaquePointer {
        var transaction: OpaquePointer?
        try check(transactionBegin(environment, nil, readOnly ? Self.readOnly : 0, &transaction), "mdb_txn_begin")
        guard let transaction else { throw Failure(description: "LMDB made no transaction") }
        return transaction
    }

    /// The unnamed database, created if need be.
    func openDatabase(_ transaction: OpaquePointer) throws -> UInt32 {
        var database: UInt32 = 0
        try check(databaseOpen(transaction, nil, Self.create, &database), "mdb_dbi_open")
        return database
    }

    func commit(_ transaction: OpaquePointer) throws { try check(transactionCommit(transaction), "mdb_txn_commit") }
    func abort(_ transaction: OpaquePointer) { transactionAbort(transaction) }
    func reset(_ transaction: OpaquePointer) { transactionReset(transaction) }
    func renew(_ transaction: OpaquePointer) -> Bool { transactionRenew(transaction) == 0 }

    func put(_ transaction: OpaquePointer, _ database: UInt32, key: [UInt8], value: UnsafeRawBufferPointer) throws {
        try key.withUnsafeBytes { keyBytes in
            var keyValue = Value(size: keyBytes.count, data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var dataValue = Value(size: value.count, data: UnsafeMutableRawPointer(mutating: value.baseAddress))
            try check(putValue(transaction, database, &keyValue, &dataValue, 0), "mdb_put")
        }
    }

    /// The bytes stored at `key`, valid until the transaction ends, or `nil` when there are none.
    func get(_ transaction: OpaquePointer, _ database: UInt32, key: [UInt8]) -> UnsafeRawBufferPointer? {
        key.withUnsafeBytes { keyBytes in
            var keyValue = Value(size: keyBytes.count, data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var dataValue = Value(size: 0, data: nil)
            guard getValue(transaction, database, &keyValue, &dataValue) == 0 else { return nil }
            return UnsafeRawBufferPointer(start: dataValue.data, count: dataValue.size)
        }
    }

    private func check(_ result: Int32, _ call: String) throws {
        guard result != 0 else { return }
        throw Failure(
            description: "LMDB failed in \(call): " + (errorText(result).map { String(cString: $0) } ?? "\(result)"))
    }
}
