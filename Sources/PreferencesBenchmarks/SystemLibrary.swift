#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A C library of the system's, opened when the benchmark runs, so that the package links nothing
/// beyond what Swift brings and a machine without the library still runs every other contender.
struct SystemLibrary {
    private let handle: UnsafeMutableRawPointer

    /// The first of `names` the dynamic loader finds, or `nil` when it finds none.
    init?(anyOf names: [String]) {
        guard let handle = names.lazy.compactMap({ dlopen($0, RTLD_NOW) }).first else { return nil }
        self.handle = handle
    }

    /// The function called `name`, as the C function type `type`, or `nil` when the library has none.
    func function<T>(_ name: String, as type: T.Type) -> T? {
        dlsym(handle, name).map { unsafeBitCast($0, to: type) }
    }
}
