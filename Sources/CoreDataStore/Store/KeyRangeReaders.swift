import Foundation
import GRDB

/// Other read connections to a store file that nothing writes while they are open (an export's
/// private snapshot), so that a large entity's rows can be read and encoded in ranges of keys on
/// several threads at once, and their results taken back in key order: the bytes come out as one
/// pass over the rows would make them, and only the time changes.
///
/// Why by hand: Swift's structured concurrency would need the encoders to be async and the
/// connections `Sendable` across suspension points; a fixed set of threads, each with its own
/// connection in one read transaction, is what SQLite's threading model asks for.
package struct KeyRangeReaders: Sendable {
    package let connections: [DatabaseQueue]
    /// Rows per range: small enough that a range's lines are a few MB, large enough that the
    /// hand-over costs nothing next to the rows.
    package var rowsPerRange: Int
    /// A range whose lines pass this many bytes is cut there; the rest is encoded by the caller
    /// in order, so memory stays bounded however large the records are.
    package var bytesPerRange: Int
    /// For an entity of few rows, fewer rows per range, so that each connection gets about this
    /// many ranges of it (never under `fewestBalancedRows` rows a range); 0: every range is
    /// `rowsPerRange` rows. A range is what one reader takes: another app's 10,004 recipes in
    /// ranges of 2,048 were five ranges for two readers, and one reader sat idle through the
    /// fifth while the other encoded it, a tenth of the export.
    package var rangesPerConnection: Int

    /// How many parts (`run`) per connection may be made and not yet taken: with one, a reader
    /// done with its part waited, idle, until the writer had taken the other reader's earlier
    /// one, whenever that one took longer. Each waiting part holds its lines (at most
    /// `bytesPerRange` and one line).
    package var partsAheadPerConnection: Int

    /// The fewest rows in a range cut smaller for balance: a range costs a query and a hand-over.
    package static let fewestBalancedRows = 256

    package init(
        connections: [DatabaseQueue], rowsPerRange: Int = 2048, bytesPerRange: Int = 2 << 20, rangesPerConnection: Int = 0,
        partsAheadPerConnection: Int = 1
    ) {
        self.connections = connections
        self.rowsPerRange = max(1, rowsPerRange)
        self.bytesPerRange = max(1, bytesPerRange)
        self.rangesPerConnection = max(0, rangesPerConnection)
        self.partsAheadPerConnection = max(1, partsAheadPerConnection)
    }

    /// `count` read-only connections to the file at `path`.
    package static func open(
        path: String, count: Int, rowsPerRange: Int = 2048, bytesPerRange: Int = 2 << 20, rangesPerConnection: Int = 0,
        partsAheadPerConnection: Int = 1
    ) throws -> KeyRangeReaders {
        var configuration = StoreReader.besideConfiguration(readonly: true)
        configuration.foreignKeysEnabled = false
        return KeyRangeReaders(
            connections: try (0..<max(0, count)).map { _ in try DatabaseQueue(path: path, configuration: configuration) },
            rowsPerRange: rowsPerRange, bytesPerRange: bytesPerRange, rangesPerConnection: rangesPerConnection,
            partsAheadPerConnection: partsAheadPerConnection)
    }

    /// The rows per range of an entity of `count` rows: `rowsPerRange`, or fewer (down to
    /// `fewestBalancedRows`) where that would give a connection fewer than `rangesPerConnection`.
    package func rowsPerRange(forCount count: Int) -> Int {
        guard rangesPerConnection > 0, !connections.isEmpty else { return rowsPerRange }
        let ranges = connections.count * rangesPerConnection
        return min(rowsPerRange, max(Self.fewestBalancedRows, (count + ranges - 1) / ranges))
    }

    /// Whether `table`'s `Z_PK` is its rowid: then `ORDER BY Z_PK` walks the table's own B-tree
    /// and ranges of `Z_PK` split it into parts that, in order, are exactly that walk. A table
    /// another tool made with another key (no primary key, `INT PRIMARY KEY`, `DESC`, `WITHOUT
    /// ROWID`, which SQLite backs with an index of origin "pk") is read in one pass instead.
    package static func isKeyedByRowid(_ db: Database, table: String) throws -> Bool {
        let keys = try Row.fetchAll(db, sql: "SELECT name, type FROM pragma_table_info(?) WHERE pk > 0", arguments: [table])
        guard keys.count == 1, let name = keys[0]["name"] as String?, name.uppercased() == CoreDataSQL.keyColumn,
            (keys[0]["type"] as String?)?.uppercased() == "INTEGER"
        else { return false }
        return try Int.fetchOne(db, sql: "SELECT count(*) FROM pragma_index_list(?) WHERE origin = 'pk'", arguments: [table]) == 0
    }

    /// The first key of each range: every `rowsPerRange(forCount:)`-th of the keys `keysSQL`
    /// lists in ascending order (rounded down to a multiple of `fewestBalancedRows` when cut
    /// smaller for balance), and how many keys it listed. The count is known only after the
    /// pass, so a start is kept every `fewestBalancedRows` keys and every k-th of them taken.
    package func rangeStarts(_ db: Database, keysSQL: String) throws -> (starts: [Int64], count: Int) {
        let every = rangesPerConnection > 0 ? min(rowsPerRange, Self.fewestBalancedRows) : rowsPerRange
        var starts: [Int64] = []
        var count = 0
        let cursor = try Int64.fetchCursor(db, sql: keysSQL)
        while let key = try cursor.next() {
            if count % every == 0 { starts.append(key) }
            count += 1
        }
        let taken = max(1, rowsPerRange(forCount: count) / every)
        guard taken > 1 else { return (starts, count) }
        return (stride(from: 0, to: starts.count, by: taken).map { starts[$0] }, count)
    }

    /// The same starts and count without reading the rows, for a table keyed by its rowid whose
    /// every row is one of the entity's records (`ModelLayout.tablesOfOneEntity`): `count(*)`,
    /// which SQLite answers from its smallest index, and a start every `rowsPerRange(forCount:)` keys from
    /// the lowest (`min` and `max` of a rowid are two descents of its B-tree). The pass over the
    /// keys read the whole table, on the writer's thread with the readers waiting (at 1M rows,
    /// 55 MB of recipes). Any ascending starts whose first is the lowest key give the same lines
    /// in the same order; where keys are dense, as a store's are, a range holds what it held.
    /// Nil when the keys are too sparse (more than twice the ranges the rows would make).
    package func rangeStarts(_ db: Database, everyKeyOf table: String) throws -> (starts: [Int64], count: Int)? {
        let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
        guard count > 0 else { return ([], 0) }
        let rows = rowsPerRange(forCount: count)
        // One statement each: asked together, `min` and `max` are a pass over every key.
        guard let low = try Int64.fetchOne(db, sql: "SELECT min(\(CoreDataSQL.keyColumn)) FROM \(table)"),
            let high = try Int64.fetchOne(db, sql: "SELECT max(\(CoreDataSQL.keyColumn)) FROM \(table)")
        else { return nil }
        let step = Int64(rows)
        let (span, overflow) = high.subtractingReportingOverflow(low)
        guard !overflow, high <= Int64.max - step, span / step <= Int64(count / rows) * 2 + 1 else { return nil }
        var starts: [Int64] = []
        var start = low
        while start <= high {
            starts.append(start)
            start += step
        }
        return (starts, count)
    }

    /// Runs `produce` for parts `0..<count`, each on one of the connections, at most
    /// `partsAheadPerConnection` parts per connection ahead of the caller, and hands each result to `consume` on the calling
    /// thread, in order. The first error, of `produce` for the earliest part or of `consume`,
    /// ends the run: every thread is stopped and waited for before it is thrown.
    package func run<Part: Sendable>(
        count: Int, produce: @escaping @Sendable (Database, Int) throws -> Part, consume: (Part) throws -> Void
    ) throws {
        precondition(!connections.isEmpty, "KeyRangeReaders.run needs a connection")
        let state = PartQueue<Part>(workers: connections.count, ahead: connections.count * partsAheadPerConnection)
        let group = DispatchGroup()
        for connection in connections {
            DispatchQueue.global().async(group: group) {
                do {
                    try connection.read { db in
                        while let index = state.claim(below: count) {
                            state.deliver(index, Result { try produce(db, index) })
                        }
                    }
                } catch {
                    // Opening the read transaction failed: the parts this thread would have claimed
                    // are claimed by the others; the error reaches the caller if none is left.
                    state.fail(error)
                }
            }
        }
        defer {
            state.stop()
            group.wait()
        }
        for index in 0..<count {
            try consume(try state.take(index).get())
        }
    }
}

/// The parts claimed, made and taken, shared by the threads under one lock.
private final class PartQueue<Part: Sendable>: @unchecked Sendable {
    // @unchecked: every field is read and written only with `condition` locked.
    private let condition = NSCondition()
    private let ahead: Int
    private var next = 0
    private var taken = 0
    private var done: [Int: Result<Part, Error>] = [:]
    private var stopped = false
    private var workers: Int
    private var failure: Error?

    init(workers: Int, ahead: Int) {
        self.workers = workers
        self.ahead = max(1, ahead)
    }

    /// The next part to make, once fewer than `ahead` are made and not yet taken; nil when none is left.
    func claim(below count: Int) -> Int? {
        condition.lock()
        defer { condition.unlock() }
        while !stopped, next < count, next - taken >= ahead { condition.wait() }
        guard !stopped, next < count else { return nil }
        next += 1
        return next - 1
    }

    func deliver(_ index: Int, _ result: Result<Part, Error>) {
        condition.lock()
        done[index] = result
        condition.broadcast()
        condition.unlock()
    }

    /// A thread that could not start: when no thread is left, the caller gets its error
    /// instead of waiting for parts nobody makes.
    func fail(_ error: Error) {
        condition.lock()
        workers -= 1
        if failure == nil { failure = error }
        condition.broadcast()
        condition.unlock()
    }

    func take(_ index: Int) -> Result<Part, Error> {
        condition.lock()
        defer { condition.unlock() }
        while done[index] == nil {
            if workers <= 0, let failure { return .failure(failure) }
            condition.wait()
        }
        taken = index + 1
        condition.broadcast()
        return done.removeValue(forKey: index)!
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
