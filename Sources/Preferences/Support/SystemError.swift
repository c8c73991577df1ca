#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The system's words for an `errno` value, such as "No space left on device".
func systemErrorDescription(_ errorNumber: Int32) -> String {
    guard let message = strerror(errorNumber) else { return "unknown error" }
    return String(cString: message)
}
