import Foundation

/// `questbak diff A B`: what differs between two stores or archives of one app, record by record.
/// Each side is read as an archive writes it (a store is exported to a scratch archive first), and
/// records are matched by identity, never by `Z_PK` when something better exists: the same
/// `cloudID` where every record of the entity has its own on both sides, else the app profile's
/// natural key (TimeQuest's), else `_pk`. A property only one side's records have (one a
/// migration added) is named as such, not counted as a change. Both sides are read into memory.
public enum Differ {
    public struct FieldChange: Sendable, Encodable {
        public var field: String
        public var old: String
        public var new: String
    }

    public struct Changed: Sendable, Encodable {
        public var identity: String
        public var fields: [FieldChange]
    }

    public struct EntityDiff: Sendable, Encodable {
        public var name: String
        /// How records were matched: "cloudID", the natural key's properties, or "_pk".
        public var matchedBy: String
        public var added: [String]
        public var removed: [String]
        public var changed: [Changed]
        /// Properties only B's records have (added by a migration), and only A's.
        public var fieldsOnlyInB: [String]
        public var fieldsOnlyInA: [String]

        public var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty }
    }

    public struct Result: Sendable, Encodable {
        public var a: String
        public var b: String
        public var entities: [EntityDiff]
        public var added: Int
        public var removed: Int
        public var changed: Int

        /// Nothing differs: no record added, removed or changed, and no property on one side only.
        public var isEmpty: Bool {
            added == 0 && removed == 0 && changed == 0 && entities.allSatisfy { $0.fieldsOnlyInA.isEmpty && $0.fieldsOnlyInB.isEmpty }
        }
    }

    public static func diff(_ a: URL, _ b: URL, workDirectory: URL) throws -> Result {
        let left = try records(of: a, workDirectory: workDirectory, label: "a")
        let right = try records(of: b, workDirectory: workDirectory, label: "b")
        var entities: [EntityDiff] = []
        for name in Set(left.keys).union(right.keys).sorted() {
            entities.append(compare(name, left[name] ?? [], right[name] ?? []))
        }
        return Result(
            a: a.path, b: b.path, entities: entities, added: entities.map(\.added.count).reduce(0, +),
            removed: entities.map(\.removed.count).reduce(0, +), changed: entities.map(\.changed.count).reduce(0, +))
    }

    typealias Record = [String: JSONValue]

    /// Every entity's records, as an archive holds them.
    static func records(of url: URL, workDirectory: URL, label: String) throws -> [String: [Record]] {
        var archive = url
        if FileKind.of(url.path) == .sqliteStore {
            archive = workDirectory.appendingPathComponent("\(label).qbak")
            _ = try Exporter.export(storeAt: url, to: .file(archive, overwrite: true), options: .init(createdAt: 0, compression: .none))
        }
        var result: [String: [Record]] = [:]
        _ = try ArchiveReader(path: archive.path, displayPath: url.path).read(onRecordLine: { member, _, line in
            let members = try JSONLine.parseObject(line)
            result[member.name, default: []].append(Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first }))
        })
        return result
    }

    static func text(_ value: JSONValue?) -> String {
        guard let value else { return "(none)" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
    }

    static func compare(_ name: String, _ a: [Record], _ b: [Record]) -> EntityDiff {
        let ignored: Set<String> = [RecordJSON.primaryKeyKey, RecordJSON.optKey]
        let keysA = Set(a.flatMap(\.keys)).subtracting(ignored)
        let keysB = Set(b.flatMap(\.keys)).subtracting(ignored)
        let shared = keysA.intersection(keysB)
        // The identity: a cloudID every record has, unique on both sides; else a natural key; else _pk.
        func unique(_ records: [Record], _ key: [String]) -> Bool {
            let values = records.map { record in key.map { record[$0] } }
            return !values.contains { $0.contains(where: { $0 == nil || $0 == .null }) }
                && Set(values.map { text(.array($0.map { $0 ?? .null })) }).count == values.count
        }
        let naturalKey = TimeQuestSchemas.all.lazy.compactMap { $0.entity(named: name)?.identity.naturalKey }.first { !$0.isEmpty } ?? []
        let key: [String]
        if shared.contains(Entity.cloudIDAttribute), unique(a, [Entity.cloudIDAttribute]), unique(b, [Entity.cloudIDAttribute]) {
            key = [Entity.cloudIDAttribute]
        } else if !naturalKey.isEmpty, naturalKey.allSatisfy(shared.contains), unique(a, naturalKey), unique(b, naturalKey) {
            key = naturalKey
        } else {
            key = [RecordJSON.primaryKeyKey]
        }
        func identity(_ record: Record) -> String { key.map { text(record[$0]) }.joined(separator: " ") }
        let left = Dictionary(a.map { (identity($0), $0) }, uniquingKeysWith: { first, _ in first })
        let right = Dictionary(b.map { (identity($0), $0) }, uniquingKeysWith: { first, _ in first })
        var changed: [Changed] = []
        for (id, old) in left.sorted(by: { $0.key < $1.key }) {
            guard let new = right[id] else { continue }
            let fields = shared.sorted().compactMap { field -> FieldChange? in
                old[field] == new[field] ? nil : FieldChange(field: field, old: text(old[field]), new: text(new[field]))
            }
            if !fields.isEmpty { changed.append(Changed(identity: id, fields: fields)) }
        }
        return EntityDiff(
            name: name, matchedBy: key.joined(separator: ", "), added: right.keys.filter { left[$0] == nil }.sorted(),
            removed: left.keys.filter { right[$0] == nil }.sorted(), changed: changed,
            fieldsOnlyInB: (a.isEmpty || b.isEmpty ? [] : keysB.subtracting(keysA)).sorted(),
            fieldsOnlyInA: (a.isEmpty || b.isEmpty ? [] : keysA.subtracting(keysB)).sorted())
    }
}
