import Foundation

/// SQLite, as many apps keep their settings: one table in WAL mode, prepared statements, one upsert
/// per write.
///
/// The system's `libsqlite3` is loaded when the benchmark runs, so that the package depends on
/// nothing and a machine without it still runs every other contender (see ``SQLite/load()``).
final class SQLiteContender: Contender {
    let name: String
    private let library: SQLite
    private let database: OpaquePointer
    private let upsert: OpaquePointer
    private let select: OpaquePointer

    init(library: SQLite, path: String, synchronous: String) throws {
        self.library = library
        name = "SQLite WAL, synchronous=\(synchronous)"
        database = try library.open(path)
        try library.execute(database, "PRAGMA journal_mode=WAL")
        try library.execute(database, "PRAGMA synchronous=\(synchronous)")
        try library.execute(
            database, "CREATE TABLE IF NOT EXISTS preferences (key TEXT PRIMARY KEY, value) WITHOUT ROWID")
        upsert = try library.prepare(
            database,
            "INSERT INTO preferences (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        )
        select = try library.prepare(database, "SELECT value FROM preferences WHERE key = ?1")
    }

    deinit {
        library.finalize(upsert)
        library.finalize(select)
        library.close(database)
    }

    private func store(_ key: String, _ bind: (OpaquePointer) -> Void) throws {
        library.bindText(upsert, 1, key)
        bind(upsert)
        try library.stepToEnd(upsert, database)
    }

    /// Runs the select for `key` and hands its row to `read`, or `nil` when there is none.
    private func load<T>(_ key: String, _ read: (OpaquePointer?) -> T) -> T {
        library.bindText(select, 1, key)
        defer { library.reset(select) }
        return read(library.step(select) == SQLite.row ? select : nil)
    }

    func write(_ value: Int, at index: Int) throws {
        try store("int\(index)") { library.bindInt($0, 2, value) }
    }

    func readInt(at index: Int) -> Int {
        load("int\(index)") { $0.map { library.columnInt($0) } ?? 0 }
    }

    func write(_ value: String, stringAt index: Int) throws {
        try store("string\(index)") { library.bindText($0, 2, value) }
    }

    func readString(at index: Int) -> String {
        load("string\(index)") { $0.map { library.columnText($0) } ?? "" }
    }

    func write(_ value: BenchmarkPet, codableAt index: Int) throws {
        let json = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        try store("pet\(index)") { library.bindText($0, 2, json) }
    }

    func readCodable(at index: Int) -> BenchmarkPet {
        let json = load("pet\(index)") { $0.map { library.columnText($0) } ?? "" }
        return (try? JSONDecoder().decode(BenchmarkPet.self, from: Data(json.utf8))) ?? .sample(-1)
    }

    func write(_ value: BenchmarkTheme, enumAt index: Int) throws {
        try store("theme\(index)") { library.bindText($0, 2, value.rawValue) }
    }

    func readEnum(at index: Int) -> BenchmarkTheme {
        load("theme\(index)") { $0.flatMap { BenchmarkTheme(rawValue: library.columnText($0)) } } ?? .system
    }

    func increment(at index: Int) throws {
        try inTransaction { try write(readInt(at: index) + 1, at: index) }
    }

    func writeBatch(_ values: [Int]) throws {
        try inTransaction {
            for (index, value) in values.enumerated() {
                try write(value, at: index)
            }
        }
    }

    /// Stores `n` values of every kind in one transaction.
    func fill(count n: Int) throws {
        try inTransaction {
            for index in 0..<n {
                try write(index, at: index)
                try write(benchmarkString(index), stringAt: index)
                try write(.sample(index), codableAt: index)
                try write(.dark, enumAt: index)
            }
        }
    }

    private func inTransaction(_ body: () throws -> Void) throws {
        try library.execute(database, "BEGIN IMMEDIATE")
        do {
            try body()
            try library.execute(database, "COMMIT")
        } catch {
            try? library.execute(database, "ROLLBACK")
            throw error
        }
    }
}

/// The few functions of the system's SQLite the benchmark calls, looked up at run time.
struct SQLite: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let row: Int32 = 100
    static let done: Int32 = 101

    // The C signatures of the functions used.
    private typealias Open = @convention(c) (UnsafePointer<CChar>, UnsafeMutablePointer<OpaquePointer?>) -> Int32
    private typealias Exec =
        @convention(c) (OpaquePointer, UnsafePointer<CChar>, OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    private typealias Prepare =
        @convention(c) (
            OpaquePointer, UnsafePointer<CChar>, Int32, UnsafeMutablePointer<OpaquePointer?>, OpaquePointer?
        ) -> Int32
    private typealias BindText = @convention(c) (OpaquePointer, Int32, UnsafePointer<CChar>, Int32, Int) -> Int32
    private typealias BindInt = @convention(c) (OpaquePointer, Int32, Int64) -> Int32
    private typealias OnStatement = @convention(c) (OpaquePointer) -> Int32
    private typealias ColumnInt = @convention(c) (OpaquePointer, Int32) -> Int64
    private typealias ColumnText = @convention(c) (OpaquePointer, Int32) -> UnsafePointer<UInt8>?
    private typealias Message = @convention(c) (OpaquePointer) -> UnsafePointer<CChar>?

    private let openDatabase: Open
    private let exec: Exec
    private let prepareStatement: Prepare
    private let bindTextValue: BindText
    private let bindInt64: BindInt
    private let stepStatement: OnStatement
    private let resetStatement: OnStatement
    private let columnInt64: ColumnInt
    private let columnTextValue: ColumnText
    private let finalizeStatement: OnStatement
    private let closeDatabase: OnStatement
    private let errorMessage: Message

    /// The system's SQLite, or `nil` when it is not installed.
    static func load() -> SQLite? {
        guard
            let library = SystemLibrary(anyOf: [
                "libsqlite3.so.0", "libsqlite3.so", "libsqlite3.dylib", "/usr/lib/libsqlite3.dylib",
            ])
        else {
            return nil
        }
        guard let openDatabase = library.function("sqlite3_open", as: Open.self),
            let exec = library.function("sqlite3_exec", as: Exec.self),
            let prepareStatement = library.function("sqlite3_prepare_v2", as: Prepare.self),
            let bindTextValue = library.function("sqlite3_bind_text", as: BindText.self),
            let bindInt64 = library.function("sqlite3_bind_int64", as: BindInt.self),
            let stepStatement = library.function("sqlite3_step", as: OnStatement.self),
            let resetStatement = library.function("sqlite3_reset", as: OnStatement.self),
            let columnInt64 = library.function("sqlite3_column_int64", as: ColumnInt.self),
            let columnTextValue = library.function("sqlite3_column_text", as: ColumnText.self),
            let finalizeStatement = library.function("sqlite3_finalize", as: OnStatement.self),
            let closeDatabase = library.function("sqlite3_close", as: OnStatement.self),
            let errorMessage = library.function("sqlite3_errmsg", as: Message.self)
        else { return nil }
        return SQLite(
            openDatabase: openDatabase, exec: exec, prepareStatement: prepareStatement,
            bindTextValue: bindTextValue, bindInt64: bindInt64, stepStatement: stepStatement,
            resetStatement: resetStatement, columnInt64: columnInt64, columnTextValue: columnTextValue,
            finalizeStatement: finalizeStatement, closeDatabase: closeDatabase, errorMessage: errorMessage
        )
    }

    func open(_ path: String) throws -> OpaquePointer {
        var database: OpaquePointer?
        guard openDatabase(path, &database) == 0, let database else {
            throw Failure(description: "SQLite could not open \(path)")
        }
        return database
    }

    func execute(_ database: OpaquePointer, _ sql: String) throws {
        guard exec(database, sql, nil, nil, nil) == 0 else { throw failure(database, sql) }
    }

    func prepare(_ database: OpaquePointer, _ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard prepareStatement(database, sql, -1, &statement, nil) == 0, let statement else {
            throw failure(database, sql)
        }
        return statement
    }

    /// Binds text, which SQLite copies (`SQLITE_TRANSIENT`).
    func bindText(_ statement: OpaquePointer, _ index: Int32, _ text: String) {
        _ = bindTextValue(statement, index, text, -1, -1)
    }

    func bindInt(_ statement: OpaquePointer, _ index: Int32, _ value: Int) {
        _ = bindInt64(statement, index, Int64(value))
    }

    func step(_ statement: OpaquePointer) -> Int32 { stepStatement(statement) }

    /// Runs a statement that returns no rows, and resets it for the next use.
    func stepToEnd(_ statement: OpaquePointer, _ database: OpaquePointer) throws {
        let result = stepStatement(statement)
        _ = resetStatement(statement)
        guard result == Self.done else { throw failure(database, "a prepared statement") }
    }

    func reset(_ statement: OpaquePointer) { _ = resetStatement(statement) }
    func columnInt(_ statement: OpaquePointer) -> Int { Int(columnInt64(statement, 0)) }
    func columnText(_ statement: OpaquePointer) -> String {
        columnTextValue(statement, 0).map { String(cString: $0) } ?? ""
    }
    func finalize(_ statement: OpaquePointer) { _ = finalizeStatement(statement) }
    func close(_ database: OpaquePointer) { _ = closeDatabase(database) }

    private func failure(_ database: OpaquePointer, _ sql: String) -> Failure {
        Failure(description: "SQLite failed on \(sql): " + (errorMessage(database).map { String(cString: $0) } ?? "?"))
    }
}
