import Foundation
import GRDB

/// One change questbak made to the data on its way into a store, with enough detail for a user
/// to find the record and see what it was.
public struct RepairEntry: Sendable, Equatable, Encodable {
    public enum Kind: String, Sendable, Encodable {
        /// A fix of damaged or inconsistent data; needs `--validate`.
        case repair
        /// A value a schema migration requires (a V1 record's new cloudID); always allowed.
        case migration
        /// Data the target schema has no place for (`--allow-newer`); kept here, not dropped.
        case unstorable
        /// Core Data's bookkeeping made consistent with the records (`Z_MAX` raised to the
        /// largest `Z_PK`); always allowed, always reported.
        case bookkeeping
    }

    public enum Rule: String, Sendable, Encodable, CaseIterable {
        case orphan, dedup, repoint, merge, defaultFill = "default", cloudID, unknownProperty = "unknown-property"
        case maximumPrimaryKey = "z-max"
    }

    public var rule: Rule
    public var kind: Kind
    public var entity: String
    public var primaryKey: Int64
    /// The record's cloudID after the import, when its entity has one.
    public var cloudID: String?
    public var field: String?
    public var old: ReportValue?
    public var new: ReportValue?

    enum CodingKeys: String, CodingKey {
        case rule, kind, entity, primaryKey = "_pk", cloudID, field, old, new
    }
}

/// A value in a report: a stored value, or a whole record (a dropped duplicate).
public enum ReportValue: Sendable, Equatable, Encodable {
    case value(Value)
    case record([String: Value])

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .value(let value): try container.encode(JSONText(value))
        case .record(let values):
            try container.encode(values.mapValues(JSONText.init))
        }
    }

    /// A value encoded the way the archive writes it (dates as exact ISO text, …).
    struct JSONText: Encodable {
        var value: Value
        init(_ value: Value) { self.value = value }

        func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            switch value {
            case .null: try container.encodeNil()
            case .integer(let number): try container.encode(number)
            case .boolean(let flag): try container.encode(flag)
            case .double(let number): try encodeNumber(number, in: &container)
            case .string(let text): try container.encode(text)
            case .textBytes(let bytes): try container.encode([RecordJSON.textBytesKey: bytes.base64EncodedString()])
            case .integerDate(let seconds): try container.encode(seconds)
            case .date(let seconds):
                if let text = DateText.iso8601(secondsSinceReferenceDate: seconds) {
                    try container.encode(text)
                } else {
                    try encodeNumber(seconds, in: &container)
                }
            case .uuid(let uuid): try container.encode(uuid.uuidString)
            case .binary(let bytes): try container.encode(bytes.base64EncodedString())
            case .integerArray(let numbers): try container.encode(numbers)
            case .stringArray(let texts): try container.encode(texts)
            }
        }

        /// Finite numbers as numbers; infinities with the archive's spellings (RecordJSON).
        private func encodeNumber(_ number: Double, in container: inout SingleValueEncodingContainer) throws {
            if number.isFinite {
                try container.encode(number)
            } else {
                let spelling = RecordJSON.nonFiniteSpellings.first { $0.value == number }?.key ?? "NaN"
                try container.encode(spelling)
            }
        }
    }
}

public struct RecordField: Hashable, Sendable {
    public var entity: String
    public var primaryKey: Int64
    public var field: String
}

/// Collects repair entries. Counts stay in memory; the entries go to a small SQLite file of
/// their own, so a migration that gives a million records a cloudID does not hold a million
/// entries in memory, and each entry's cloudID can be set to its final value at the end.
public final class RepairLog {
    public private(set) var counts: [String: Int] = [:]
    public private(set) var total = 0
    public private(set) var repairs = 0
    private let queue: DatabaseQueue
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    private var pending: [RepairEntry] = []

    init(directory: URL) throws {
        queue = try DatabaseQueue(path: directory.appendingPathComponent("repairs.sqlite").path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE entry (seq INTEGER PRIMARY KEY, rule TEXT, kind TEXT, entity TEXT, pk INTEGER,
                                    cloud TEXT, field TEXT, old TEXT, new TEXT);
                CREATE INDEX entry_record ON entry (entity, pk);
                """)
        }
    }

    func record(_ entry: RepairEntry) throws {
        counts["\(entry.kind.rawValue).\(entry.rule.rawValue)", default: 0] += 1
        total += 1
        if entry.kind == .repair { repairs += 1 }
        pending.append(entry)
        if pending.count >= 10_000 { try flush() }
    }

    private func flush() throws {
        guard !pending.isEmpty else { return }
        let entries = pending
        pending.removeAll(keepingCapacity: true)
        try queue.write { db in
            let insert = try db.makeStatement(sql: "INSERT INTO entry (rule, kind, entity, pk, cloud, field, old, new) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            for entry in entries {
                try insert.execute(arguments: [
                    entry.rule.rawValue, entry.kind.rawValue, entry.entity, entry.primaryKey, entry.cloudID, entry.field,
                    try entry.old.map { String(decoding: try encoder.encode($0), as: UTF8.self) },
                    try entry.new.map { String(decoding: try encoder.encode($0), as: UTF8.self) },
                ])
            }
        }
    }

    /// Gives every entry of a record that still exists that record's final cloudID.
    func resolveCloudIDs(entity: String, lookup: (Int64) throws -> String?) throws {
        try flush()
        try queue.write { db in
            let keys = try Int64.fetchAll(db, sql: "SELECT DISTINCT pk FROM entry WHERE entity = ? AND rule <> 'dedup'", arguments: [entity])
            let update = try db.makeStatement(sql: "UPDATE entry SET cloud = ? WHERE entity = ? AND pk = ? AND rule <> 'dedup'")
            for key in keys {
                if let cloudID = try lookup(key) { try update.execute(arguments: [cloudID, entity, key]) }
            }
        }
    }

    /// `(entity, _pk, field)` of every entry of one rule; `field` is "" for whole-record rules.
    public func keys(rule: RepairEntry.Rule) throws -> Set<RecordField> {
        try flush()
        return try queue.read { db in
            Set(try Row.fetchAll(db, sql: "SELECT entity, pk, field FROM entry WHERE rule = ?", arguments: [rule.rawValue]).map {
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
                var fields: [String] = []
                func add(_ key: String, _ json: String?) { if let json { fields.append("\"\(key)\":\(json)") } }
                func quoted(_ text: String?) -> String? {
                    text.map { value in
                        var bytes: [UInt8] = []
                        RecordJSON.appendString(value, to: &bytes)
                        return String(decoding: bytes, as: UTF8.self)
                    }
                }
                add("_pk", String(row[3] as Int64))
                add("cloudID", quoted(row[4]))
                add("entity", quoted(row[2]))
                add("field", quoted(row[5]))
                add("kind", quoted(row[1]))
                add("new", row[7])
                add("old", row[6])
                add("rule", quoted(row[0]))
                try body("{" + fields.joined(separator: ",") + "}")
            }
        }
    }

    /// The first `limit` entries as one readable line each, for text output.
    public func firstEntriesAsText(_ limit: Int) throws -> [String] {
        try flush()
        return try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT rule, kind, entity, pk, cloud, field, old, new FROM entry ORDER BY seq LIMIT ?", arguments: [limit]).map { row in
                let rule: String = row[0]
                let kind: String = row[1]
                let record = "\(row[2] as String) _pk \(row[3] as Int64)" + ((row[4] as String?).map { " (\($0))" } ?? "")
                let old: String = row[6] ?? "null"
                let new: String = row[7] ?? "null"
                let change: String
                switch rule {
                case RepairEntry.Rule.dedup.rawValue: change = "dropped as a duplicate of _pk \(new)"
                case RepairEntry.Rule.unknownProperty.rawValue: change = "\((row[5] as String?) ?? "record") not storable: \(old.prefix(120))"
                default: change = "\((row[5] as String?) ?? ""): \(old.prefix(60)) → \(new.prefix(60))"
                }
                return "\(kind) \(rule): \(record) \(change)"
            }
        }
    }
}
