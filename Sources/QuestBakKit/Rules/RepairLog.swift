import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// One change questbak made to the data on its way into a store, with enough detail for a user
/// to find the record and see what it was.
package struct RepairEntry: Sendable, Equatable, Encodable {
    /// What an entry did to a record.
    public enum Kind: String, Sendable, Encodable, CaseIterable {
        /// A fix of damaged or inconsistent data; needs `--validate`.
        case repair
        /// A value a schema migration requires (a V1 record's new cloudID); always allowed.
        case migration
        /// Data the target schema has no place for (`--allow-newer`); kept here, not dropped.
        case unstorable
        /// Core Data's bookkeeping made consistent with the records (`Z_MAX` raised to the
        /// largest `Z_PK`, the metadata computed for the schema written); always allowed, always
        /// reported.
        case bookkeeping
        /// What `import --merge` did to the store: a record inserted, a field filled, a conflict
        /// settled, a cloudID superseded, a link added, a reference that could not be translated.
        case merge
    }

    /// The rule that made an entry.
    public enum Rule: String, Sendable, Encodable, CaseIterable {
        /// A reference to a missing record removed, a duplicate removed, a reference moved to the record kept, records merged into one.
        case orphan, dedup, repoint, merge
        /// A missing value filled with its property's default.
        case defaultFill = "default"
        /// A cloud identifier given or made unique.
        case cloudID
        /// A value for a property the target model lacks: kept in the report, not in the store.
        case unknownProperty = "unknown-property"
        /// `Z_MAX` raised above the largest key.
        case maximumPrimaryKey = "z-max"
        /// The store's metadata computed (the archive's names another version, or it has none).
        case metadata
        /// A merge's entries: a record inserted, a field filled, a conflict settled, a cloud identifier superseded, a link added, a reference that could not be translated.
        case insert, fill, conflict, supersede, link, dangling
    }

    /// The rule that made the entry.
    public var rule: Rule
    /// What it did.
    public var kind: Kind
    /// The record's entity.
    public var entity: String
    /// The record's `Z_PK`.
    public var primaryKey: Int64
    /// The record's cloudID after the import, when its entity has one.
    public var cloudID: String?
    /// The field it changed, if one.
    public var field: String?
    /// The field's value before.
    public var old: ReportValue?
    /// The field's value after.
    public var new: ReportValue?

    enum CodingKeys: String, CodingKey {
        case rule, kind, entity
        case primaryKey = "_pk"
        case cloudID, field, old, new
    }
}

/// A value in a report: a stored value, or a whole record (a dropped duplicate).
package enum ReportValue: Sendable, Equatable, Encodable {
    /// One value.
    case value(Value)
    /// A whole record, by property.
    case record([String: Value])

    /// The JSON text, written by the one value codec (`ValueJSON`): a record's keys sorted.
    public var json: String {
        switch self {
        case .value(let value): return ValueJSON.text(value)
        case .record(let values):
            var object = JSONObjectWriter()
            for key in values.keys.sorted() { object.add(key, values[key] ?? .null) }
            return String(decoding: object.finished, as: UTF8.self)
        }
    }

    /// Encodes the value as its JSON.
    public func encode(to encoder: Encoder) throws {
        // Through the codec's text, so a report encoded by JSONEncoder says what the log says.
        var container = encoder.singleValueContainer()
        try container.encode(try JSONValue(text: json))
    }
}

/// One field of one record.
package struct RecordField: Hashable, Sendable {
    /// The record's entity.
    public var entity: String
    /// The record's `Z_PK`.
    public var primaryKey: Int64
    /// The field's name.
    public var field: String
}

/// Collects repair entries. Counts stay in memory; the entries go to a small SQLite file of
/// their own, so a migration that gives a million records a cloudID does not hold a million
/// entries in memory, and each entry's cloudID can be set to its final value at the end.
package final class RepairLog {
    /// Entries by `kind.rule`.
    public var counts: [String: Int] {
        Dictionary(uniqueKeysWithValues: tally.map { ("\($0.key.kind.rawValue).\($0.key.rule.rawValue)", $0.count) })
    }
    /// The counts as kept: by the two enums, not by a text made for every entry; in a list
    /// searched from the start, not a map: a log holds a few kinds of entry (a merge two or
    /// three), and hashing the key of each of a merge's half a million entries cost its thread
    /// half of its logging.
    private var tally: [(key: Tally, count: Int)] = []
    private struct Tally: Equatable {
        var kind: RepairEntry.Kind
        var rule: RepairEntry.Rule
    }
    /// Entries recorded.
    public private(set) var total = 0
    /// Entries that repaired a record (kind `repair`).
    public private(set) var repairs = 0
    private let queue: DatabaseQueue
    private var pending: [RepairEntry] = []
    /// Full batches are written on a queue of their own while the caller goes on making the next
    /// (a merge into a second device logs half a million entries, and writing them took a sixth
    /// of its time on the one core): at most one batch is being written at a time.
    private let writer = DispatchQueue(label: "questbak.repair-log")
    private let writing = DispatchGroup()
    /// What the last batch written in the background failed with, for the caller's next call.
    private let failure = WriteFailure()
    private static let batchSize = 10_000

    init(directory: URL) throws {
        queue = try DatabaseQueue(path: directory.appendingPathComponent("repairs.sqlite").path)
        // A scratch file that lives as long as the command: nothing to keep through a crash, so
        // no sync at each of its commits (a merge into a second device makes fifty of them).
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        // Its rollback journal is truncated at each commit, not deleted, and stays open (the one
        // connection keeps its lock, which nothing else asks for): a journal file made and
        // deleted at each commit was a twentieth of the log's writer thread. The journal stays on
        // disk, not in memory: `resolveCloudIDs` changes every page of a migration's log in one
        // transaction, whose first versions an in-memory journal would hold (hundreds of MB at 5M
        // records). Its pages stay 4 KiB: 64 KiB pages wrote fewer of them, but raised a merge
        // into a second device's peak RSS from 52 to 80 MB at 100k records (docs/performance.md).
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
            try db.execute(sql: "PRAGMA journal_mode = TRUNCATE")
        }
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE entry (seq INTEGER PRIMARY KEY, rule INTEGER, kind INTEGER, entity TEXT, pk INTEGER,
                                        cloud TEXT, field TEXT, old TEXT, new TEXT);
                    """)
        }
    }

    func record(_ entry: RepairEntry) throws {
        let key = Tally(kind: entry.kind, rule: entry.rule)
        if let index = tally.firstIndex(where: { $0.key == key }) {
            tally[index].count += 1
        } else {
            tally.append((key, 1))
        }
        total += 1
        if entry.kind == .repair { repairs += 1 }
        pending.append(entry)
        if pending.count >= Self.batchSize { try handOff() }
    }

    /// Starts writing the pending entries in the background, once the batch before is written.
    private func handOff() throws {
        try finishWrites()
        guard !pending.isEmpty else { return }
        let entries = pending
        pending = []
        pending.reserveCapacity(Self.batchSize)
        let (queue, writing, failure) = (self.queue, self.writing, self.failure)
        writing.enter()
        writer.async {
            defer { writing.leave() }
            do { try Self.write(entries, to: queue) } catch { failure.error = error }
        }
    }

    /// Waits for the batch being written in the background, and throws what its write threw:
    /// a merge calls it before it commits, so a log that could not be written fails the merge
    /// as it did when every batch was written before the next entry was made.
    func finishWrites() throws {
        writing.wait()
        if let error = failure.error {
            failure.error = nil
            throw error
        }
    }

    /// Every entry written: before the log is read.
    private func flush() throws {
        try handOff()
        try finishWrites()
    }

    private static func write(_ entries: [RepairEntry], to queue: DatabaseQueue) throws {
        try queue.write { db in
            // Bound through `ExactSQL`, as the store writer binds: GRDB's arguments box every
            // value, which cost a merge into a second device (500,000 entries) a sixth of its time.
            // `rowsPerInsert` entries go in one statement: each statement run has a cost of its
            // own (reset, start, end) that a merge's half a million entries paid one by one.
            let columns = 8
            func insert(rows: Int) -> String {
                "INSERT INTO entry (rule, kind, entity, pk, cloud, field, old, new) VALUES "
                    + repeatElement("(?, ?, ?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
            }
            let full = try db.cachedStatement(sql: insert(rows: Self.rowsPerInsert))
            // A statement's texts are written into one buffer and bound from their ranges of it,
            // not each made a `Data` of its own and copied again to be bound.
            var arguments: [ExactArgument] = []
            arguments.reserveCapacity(columns * Self.rowsPerInsert)
            var texts: [UInt8] = []
            var row = 0
            // Rule and kind by the entry before's codes where they are the same (a merge's
            // entries come in runs), not looked up in the two maps for each entry.
            var rule = (entries.first?.rule, Int64(-1))
            var kind = (entries.first?.kind, Int64(-1))
            if let first = entries.first {
                rule.1 = Self.ruleCodes[first.rule] ?? -1
                kind.1 = Self.kindCodes[first.kind] ?? -1
            }
            // By index: each entry is compared with the one before where they lie, not copied.
            for index in entries.indices {
                let at = row * columns
                // A text the entry before in the same statement had (its record's entity,
                // cloudID and field) is bound from the same bytes: a merge logs several entries
                // per record, and making every text again took half of the log's own time.
                func text(_ column: Int, same: Bool, _ string: @autoclosure () -> String?) {
                    arguments.append(row > 0 && same ? arguments[at - columns + column] : Self.append(string(), to: &texts))
                }
                let previous = max(index - 1, entries.startIndex)
                if entries[index].rule != rule.0 { rule = (entries[index].rule, Self.ruleCodes[entries[index].rule] ?? -1) }
                if entries[index].kind != kind.0 { kind = (entries[index].kind, Self.kindCodes[entries[index].kind] ?? -1) }
                arguments.append(.integer(rule.1))
                arguments.append(.integer(kind.1))
                text(2, same: entries[index].entity == entries[previous].entity, entries[index].entity)
                arguments.append(.integer(entries[index].primaryKey))
                text(4, same: entries[index].cloudID == entries[previous].cloudID, entries[index].cloudID)
                text(5, same: entries[index].field == entries[previous].field, entries[index].field)
                arguments.append(Self.append(entries[index].old, to: &texts))
                arguments.append(Self.append(entries[index].new, to: &texts))
                row += 1
                if row == Self.rowsPerInsert {
                    try ExactSQL.execute(full, arguments, texts: texts)
                    arguments.removeAll(keepingCapacity: true)
                    texts.removeAll(keepingCapacity: true)
                    row = 0
                }
            }
            // The last entries, fewer than a statement's rows, in one statement of their own
            // (prepared once per batch, not cached: its row count is the batch's remainder).
            if row > 0 { try ExactSQL.execute(try db.makeStatement(sql: insert(rows: row)), arguments, texts: texts) }
        }
    }

    /// Entries per `INSERT` of the log (8 values each, far below SQLite's limit of 32,766).
    private static let rowsPerInsert = 64

    /// A rule and a kind are kept as their place in `allCases`, and read back as their names: an
    /// integer is bound without the copy SQLite makes of every text (two of an entry's seven).
    private static let ruleCodes = Dictionary(uniqueKeysWithValues: RepairEntry.Rule.allCases.enumerated().map { ($1, Int64($0)) })
    private static let kindCodes = Dictionary(uniqueKeysWithValues: RepairEntry.Kind.allCases.enumerated().map { ($1, Int64($0)) })
    private static let dedupCode = ruleCodes[.dedup] ?? -1

    private static func name<Names: CaseIterable & RawRepresentable>(_ code: Int64, of: Names.Type) -> String
    where Names.RawValue == String, Names.AllCases.Index == Int {
        Names.allCases.indices.contains(Int(code)) ? Names.allCases[Int(code)].rawValue : ""
    }

    /// Text as GRDB bound it before: up to its first NUL (the log's readers read text as C
    /// strings, and look entries up by entity with GRDB's binding), so every report is as it was.
    /// Its bytes are appended to `texts`; the argument names them.
    private static func append(_ string: String?, to texts: inout [UInt8]) -> ExactArgument {
        guard var string else { return .null }
        // Through the contiguous bytes: searched and copied by the view, this took a third of the log's time.
        return string.withUTF8 { bytes in
            let start = texts.count
            texts.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[..<(bytes.firstIndex(of: 0) ?? bytes.endIndex)]))
            return .text(start..<texts.count)
        }
    }

    /// A report value's JSON text (`ReportValue.json`), cut as `append(_:to:)` cuts a text: one
    /// value is written by the codec straight into `texts`, not made a `String` first.
    private static func append(_ value: ReportValue?, to texts: inout [UInt8]) -> ExactArgument {
        guard let value else { return .null }
        guard case .value(let one) = value else { return append(value.json, to: &texts) }
        let start = texts.count
        ValueJSON.append(one, to: &texts)
        // The codec escapes every control character, so no NUL is written: the cut is kept
        // only so that this says exactly what `append(_:to:)` of the same JSON says.
        if let nul = texts[start...].firstIndex(of: 0) { texts.removeSubrange(nul...) }
        return .text(start..<texts.count)
    }

    /// Forgets every entry, for a restore made again from the start.
    func reset() throws {
        pending.removeAll()
        // A batch still being written would land after the DELETE below.
        try finishWrites()
        tally = []
        total = 0
        repairs = 0
        try queue.write { db in try db.execute(sql: "DELETE FROM entry") }
    }

    /// Gives every entry of a record that still exists that record's final cloudID.
    func resolveCloudIDs(entity: String, lookup: (Int64) throws -> String?) throws {
        try flush()
        try queue.write { db in
            // Made once, when first needed: kept up to date through millions of inserts (a
            // merge logs one entry per field it settles) it cost a tenth of a merge's time.
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS entry_record ON entry (entity, pk)")
            // The records' keys are read a batch at a time, never all at once: a migration logs a
            // cloudID for every record, and at 5M records the array alone (and its copies while
            // it grew) took a migration past 128 MB.
            let batch = try db.makeStatement(
                sql: "SELECT DISTINCT pk FROM entry WHERE entity = ? AND rule <> \(Self.dedupCode) AND pk > ? ORDER BY pk LIMIT 10000")
            let update = try db.makeStatement(sql: "UPDATE entry SET cloud = ? WHERE entity = ? AND pk = ? AND rule <> \(Self.dedupCode)")
            var last = Int64.min
            while true {
                let keys = try Int64.fetchAll(batch, arguments: [entity, last])
                guard let largest = keys.last else { break }
                for key in keys {
                    if let cloudID = try lookup(key) { try update.execute(arguments: [cloudID, entity, key]) }
                }
                last = largest
            }
        }
    }

    /// `(entity, _pk, field)` of every entry of one rule; `field` is "" for whole-record rules.
    public func keys(rule: RepairEntry.Rule) throws -> Set<RecordField> {
        try flush()
        let code = Self.ruleCodes[rule] ?? -1
        return try queue.read { db in
            Set(
                try Row.fetchAll(db, sql: "SELECT entity, pk, field FROM entry WHERE rule = ?", arguments: [code]).map {
                    RecordField(entity: $0[0], primaryKey: $0[1], field: ($0[2] as String?) ?? "")
                })
        }
    }

    /// Every entry in the order recorded, each as one line of JSON (keys sorted).
    public func forEachEntryLine(_ body: (String) throws -> Void) throws {
        try flush()
        try queue.read { db in
            let cursor = try Row.fetchCursor(db, sql: "SELECT rule, kind, entity, pk, cloud, field, old, new FROM entry ORDER BY seq")
            while let row = try cursor.next() {
                var object = JSONObjectWriter()
                object.add("_pk", .integer(row[3]))
                object.add(CompiledEntity.cloudIDAttribute, string: row[4])
                object.add("entity", string: row[2])
                object.add("field", string: row[5])
                object.add("kind", string: Self.name(row[1], of: RepairEntry.Kind.self))
                object.add("new", json: row[7])
                object.add("old", json: row[6])
                object.add("rule", string: Self.name(row[0], of: RepairEntry.Rule.self))
                try body(String(decoding: object.finished, as: UTF8.self))
            }
        }
    }

    /// An entry as the log keeps it, its values already in the codec's JSON text.
    public struct LoggedEntry: Sendable, Equatable {
        /// The rule that made the entry.
        public var rule: String
        /// What it did.
        public var kind: String
        /// The record's entity.
        public var entity: String
        /// The record's `Z_PK`.
        public var primaryKey: Int64
        /// The record's cloud identifier, if it has one.
        public var cloudID: String?
        /// The field it changed, if one.
        public var field: String?
        /// The field's value before, as JSON.
        public var old: String?
        /// The field's value after, as JSON.
        public var new: String?
    }

    /// The first `limit` entries, in the order recorded.
    public func firstEntries(_ limit: Int) throws -> [LoggedEntry] {
        try flush()
        return try queue.read { db in
            try Row.fetchAll(
                db, sql: "SELECT rule, kind, entity, pk, cloud, field, old, new FROM entry ORDER BY seq LIMIT ?", arguments: [limit]
            ).map { row in
                LoggedEntry(
                    rule: Self.name(row[0], of: RepairEntry.Rule.self), kind: Self.name(row[1], of: RepairEntry.Kind.self), entity: row[2],
                    primaryKey: row[3], cloudID: row[4], field: row[5], old: row[6], new: row[7]
                )
            }
        }
    }
}

/// An error of a write on the log's own queue, handed to the thread that made the entries.
private final class WriteFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Error?

    var error: Error? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

extension RepairLog.LoggedEntry {
    /// The entry in words, one line: what a terminal shows of a report (`import`, `merge`) and
    /// what the rule tests compare.
    public var sentence: String {
        let record = "\(entity) _pk \(primaryKey)" + (cloudID.map { " (\($0))" } ?? "")
        let old = self.old ?? "null"
        let new = self.new ?? "null"
        let change: String
        switch rule {
        case RepairEntry.Rule.dedup.rawValue: change = "dropped as a duplicate of _pk \(new)"
        case RepairEntry.Rule.insert.rawValue: change = "inserted (the archive's _pk \(new))"
        case RepairEntry.Rule.fill.rawValue: change = "\(field ?? ""): filled with \(new.prefix(60))"
        // `new` is what the merged store holds, `old` the value that lost.
        case RepairEntry.Rule.conflict.rawValue: change = "\(field ?? ""): kept \(new.prefix(60)), not \(old.prefix(60))"
        case RepairEntry.Rule.supersede.rawValue: change = "the archive's copy had cloudID \(old.prefix(60)), superseded"
        case RepairEntry.Rule.link.rawValue: change = "\(field ?? ""): linked to _pk \(new)"
        case RepairEntry.Rule.dangling.rawValue:
            change = "\(field ?? ""): the archive's reference to _pk \(old) names no record of the archive, left out"
        case RepairEntry.Rule.unknownProperty.rawValue: change = "\(field ?? "record") not storable: \(old.prefix(120))"
        default: change = "\(field ?? ""): \(old.prefix(60)) → \(new.prefix(60))"
        }
        return "\(kind) \(rule): \(record) \(change)"
    }
}
