import CoreDataStore
import Foundation
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

/// Collects repair entries. Counts stay in memory; the entries go to a file of their own
/// (`RepairLogFile`), so a migration that gives a million records a cloudID does not hold a
/// million entries in memory, and each entry's cloudID can be set to its final value at the end.
package final class RepairLog {
    /// Entries by `kind.rule`.
    public var counts: [String: Int] {
        Dictionary(uniqueKeysWithValues: state.tally.map { ("\($0.key.kind.rawValue).\($0.key.rule.rawValue)", $0.count) })
    }
    /// Entries recorded.
    public var total: Int { state.total }
    /// Entries that repaired a record (kind `repair`).
    public var repairs: Int { state.repairs }
    /// The counts and the entries not yet handed to the writer, in one value: `record` changes it
    /// with one access (each stored property of a class is an access checked at run time, and
    /// four of them per entry were a fifth of the logging on a merge's thread).
    private var state = State()
    private struct State {
        /// The counts as kept: by the two enums, not by a text made for every entry; in a list
        /// searched from the start, not a map: a log holds a few kinds of entry (a merge two or
        /// three), and hashing the key of each of a merge's half a million entries cost its
        /// thread half of its logging.
        var tally: [(key: Tally, count: Int)] = []
        var total = 0
        var repairs = 0
        var pending: [RepairEntry] = []

        /// Counts the entry and keeps it; true when a batch is full.
        mutating func add(_ entry: consuming RepairEntry) -> Bool {
            let key = Tally(kind: entry.kind, rule: entry.rule)
            if let index = tally.firstIndex(where: { $0.key == key }) {
                tally[index].count += 1
            } else {
                tally.append((key, 1))
            }
            total += 1
            if entry.kind == .repair { repairs += 1 }
            pending.append(entry)
            return pending.count >= RepairLog.batchSize
        }
    }
    private struct Tally: Equatable {
        var kind: RepairEntry.Kind
        var rule: RepairEntry.Rule
    }
    private let file: RepairLogFile
    /// Full batches are written on a queue of their own while the caller goes on making the next
    /// (a merge into a second device logs half a million entries, and writing them took a sixth
    /// of its time on the one core): at most one batch is being written at a time.
    private let writer = DispatchQueue(label: "questbak.repair-log")
    private let writing = DispatchGroup()
    /// The batch being written, then (emptied by the writer, its memory kept) the next batch's
    /// array: the two arrays take turns, so a merge's fifty batches do not each take a megabyte
    /// of new memory from the system and fault its pages in on the merge's thread.
    private let written = WrittenBatch()
    /// What the last batch written in the background failed with, for the caller's next call.
    private let failure = WriteFailure()
    private static let batchSize = 10_000

    init(directory: URL) throws {
        file = try RepairLogFile(url: directory.appendingPathComponent("repairs.entries"))
    }

    /// `entry` is taken, not copied: a copy kept of each (a retain of each of its texts and
    /// values, and a release of the caller's) cost a merge's thread for each of its entries.
    func record(_ entry: consuming RepairEntry) throws {
        if state.add(entry) { try handOff() }
    }

    /// Starts writing the pending entries in the background, once the batch before is written.
    private func handOff() throws {
        try finishWrites()
        guard !state.pending.isEmpty else { return }
        // The writer is done with its array (`finishWrites`): it takes the pending entries, and
        // its emptied array takes the next.
        swap(&state.pending, &written.entries)
        if state.pending.capacity < Self.batchSize { state.pending.reserveCapacity(Self.batchSize) }
        let (file, writing, written, failure) = (self.file, self.writing, self.written, self.failure)
        writing.enter()
        writer.async {
            defer { writing.leave() }
            do { try file.append(written.entries) } catch { failure.error = error }
            written.entries.removeAll(keepingCapacity: true)
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

    /// Forgets every entry, for a restore made again from the start.
    func reset() throws {
        // A batch still being written would land after the entries are removed.
        try finishWrites()
        state = State()
        try file.removeAll()
    }

    /// Gives every entry of a record that still exists that record's final cloudID.
    ///
    /// Each entry of `entity` (but a `dedup`'s, whose record is gone) takes what `lookup` gives
    /// for its `Z_PK`, where it gives one. The file is written again with the entries changed,
    /// in the order recorded: `lookup` is asked once for each run of entries of one record (a
    /// record's entries are logged together), not once per record in the order of their keys
    /// as the SQLite log asked it; it reads the store, which nothing changes meanwhile, so a
    /// record's answer is the same whenever it is asked. A `lookup` that throws leaves every
    /// entry as it was.
    func resolveCloudIDs(entity: String, lookup: (Int64) throws -> String?) throws {
        try flush()
        guard file.entities.contains(entity) else { return }
        var last: (primaryKey: Int64, cloudID: String?)?
        try file.rewrite { entry in
            guard entry.entity == entity, entry.rule != .dedup else { return }
            let cloudID: String?
            if let last, last.primaryKey == entry.primaryKey {
                cloudID = last.cloudID
            } else {
                cloudID = try lookup(entry.primaryKey)
                last = (entry.primaryKey, cloudID)
            }
            // Cut at a NUL as the file cuts every text it keeps, so it reads back the same.
            if let cloudID { entry.cloudID = String(cloudID.prefix { $0 != "\u{0}" }) }
        }
    }

    /// `(entity, _pk, field)` of every entry of one rule; `field` is "" for whole-record rules.
    public func keys(rule: RepairEntry.Rule) throws -> Set<RecordField> {
        try flush()
        var keys: Set<RecordField> = []
        try file.forEachEntry { entry in
            if entry.rule == rule { keys.insert(RecordField(entity: entry.entity, primaryKey: entry.primaryKey, field: entry.field ?? "")) }
            return true
        }
        return keys
    }

    /// Every entry in the order recorded, each as one line of JSON (keys sorted), its values'
    /// JSON made here by the codec.
    public func forEachEntryLine(_ body: (String) throws -> Void) throws {
        try flush()
        try file.forEachEntry { entry in
            func add(_ name: String, _ value: ReportValue?, to object: inout JSONObjectWriter) {
                switch value {
                case nil: break
                case .value(let one)?: object.add(name, one)
                case .record?: object.add(name, json: value?.json)
                }
            }
            var object = JSONObjectWriter()
            object.add("_pk", .integer(entry.primaryKey))
            object.add(CompiledEntity.cloudIDAttribute, string: entry.cloudID)
            object.add("entity", string: entry.entity)
            object.add("field", string: entry.field)
            object.add("kind", string: entry.kind.rawValue)
            add("new", entry.new, to: &object)
            add("old", entry.old, to: &object)
            object.add("rule", string: entry.rule.rawValue)
            try body(String(decoding: object.finished, as: UTF8.self))
            return true
        }
    }

    /// An entry as the log gives it back, its values in the codec's JSON text.
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

    /// The first `limit` entries, in the order recorded (a negative `limit`: every entry, as
    /// SQLite's `LIMIT` read it).
    public func firstEntries(_ limit: Int) throws -> [LoggedEntry] {
        try flush()
        var entries: [LoggedEntry] = []
        guard limit != 0 else { return entries }
        try file.forEachEntry { entry in
            entries.append(
                LoggedEntry(
                    rule: entry.rule.rawValue, kind: entry.kind.rawValue, entity: entry.entity, primaryKey: entry.primaryKey,
                    cloudID: entry.cloudID, field: entry.field, old: entry.old?.json, new: entry.new?.json))
            return limit < 0 || entries.count < limit
        }
        return entries
    }
}

/// The entries the log's writer writes: handed to it by the log's owner, emptied by the writer,
/// taken back by the owner once the write is over (`RepairLog.finishWrites`), never used by both
/// at once.
private final class WrittenBatch: @unchecked Sendable {
    var entries: [RepairEntry] = []
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
