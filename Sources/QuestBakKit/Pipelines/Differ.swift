import Foundation

public enum DiffError: Error, Equatable, LocalizedError {
    /// The two inputs have no entity in common (SameApp): no record of one can be the other's.
    case notTheSameApp(a: String, b: String, entitiesA: [String], entitiesB: [String])

    public var errorDescription: String? {
        switch self {
        case .notTheSameApp(let a, let b, let entitiesA, let entitiesB):
            return SameApp.difference((a, entitiesA), (b, entitiesB)) + "; diff compares two stores or archives of one app"
        }
    }
}

/// `questbak diff A B`: what differs between two stores or archives of one app, record by record.
/// Each side is read as an archive writes it (a store is exported to a scratch archive first), and
/// records are recognised as a merge recognises them (MergeLayout), never by `Z_PK`, which differs
/// between devices: the same well-formed `cloudID` that no other record of its side shares, else a
/// uniqueness constraint of the model, else the app profile's natural key, else for a singleton the
/// one record, else every value equal. Keys are tried in that order, each on the records the ones
/// before it left unmatched, and a relationship compares the records it names, not their `_pk`s
/// (parents are matched before their children). A property only one side's records have (one a
/// migration added) is named as such, not counted as a change. Two inputs of different apps are
/// refused; a model archive and a generic one are compared by table and column. Both sides are
/// read into memory.
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
        /// How records were matched, in the order tried: "cloudID", "uniqueness constraint (…)",
        /// "natural key (…)", "singleton", "content"; the ones that matched at least one record.
        public var matchedBy: String
        /// Records only in B, and only in A, by `_pk` in ascending order.
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
        /// "records", or "tables" when one side is a model archive and the other a generic one.
        public var comparedBy: String
        public var entities: [EntityDiff]
        public var added: Int
        public var removed: Int
        public var changed: Int

        /// Nothing differs: no record added, removed or changed, and no property on one side only.
        public var isEmpty: Bool {
            added == 0 && removed == 0 && changed == 0 && entities.allSatisfy { $0.fieldsOnlyInA.isEmpty && $0.fieldsOnlyInB.isEmpty }
        }
    }

    /// `keys` open either side when it is an age-encrypted archive.
    public static func diff(_ a: URL, _ b: URL, keys: ArchiveKeys = ArchiveKeys(), workDirectory: URL) throws -> Result {
        var left = try side(of: a, keys: keys, workDirectory: workDirectory, label: "a")
        var right = try side(of: b, keys: keys, workDirectory: workDirectory, label: "b")
        guard SameApp.check(left.entityNames, right.entityNames) else {
            throw DiffError.notTheSameApp(a: a.path, b: b.path, entitiesA: left.entityNames, entitiesB: right.entityNames)
        }
        // A model archive names properties, a generic one columns: both are compared by their tables.
        let generic = ArchiveManifest.Source.genericSchema
        let byTables = Set([left.kind, right.kind]) == [ArchiveManifest.Source.modelSchema, generic]
        if byTables {
            if left.kind != generic { left = try side(of: a, keys: keys, workDirectory: workDirectory, label: "a", byTables: true) }
            if right.kind != generic { right = try side(of: b, keys: keys, workDirectory: workDirectory, label: "b", byTables: true) }
        }
        // Parents are matched before the children whose relationships name them; changes are
        // looked for once every entity is matched, so a to-many compares the records it names too.
        var matches = Matches()
        var matched: [(name: String, plan: Plan, a: [Record], b: [Record], match: EntityMatch)] = []
        for name in order(Set(left.records.keys).union(right.records.keys), left, right) {
            let plan = plan(for: name, left, right, byTables: byTables || left.kind == generic)
            let (a, b) = (left.records[name] ?? [], right.records[name] ?? [])
            matched.append((name, plan, a, b, match(a, b, plan: plan, matches: &matches)))
        }
        var entities = matched.map { changes($0.name, $0.a, $0.b, plan: $0.plan, match: $0.match, matches: matches) }
        entities.sort { $0.name < $1.name }
        return Result(
            a: a.path, b: b.path, comparedBy: byTables ? "tables" : "records", entities: entities,
            added: entities.map(\.added.count).reduce(0, +), removed: entities.map(\.removed.count).reduce(0, +),
            changed: entities.map(\.changed.count).reduce(0, +))
    }

    typealias Record = [String: JSONValue]

    /// One input as an archive holds it: its records by entity, and what says how to recognise them.
    struct Side {
        var kind: String
        var entityNames: [String]
        var records: [String: [Record]] = [:]
        /// The TimeQuest schema, or the store's own model as a schema; nil for a generic archive.
        var schema: Schema?
    }

    /// Every entity's records, as an archive holds them; `byTables` makes a model store's or
    /// archive's records its tables' rows (as a generic archive has them).
    static func side(of url: URL, keys: ArchiveKeys, workDirectory: URL, label: String, byTables: Bool = false) throws -> Side {
        var archive = url
        var archiveKeys = keys
        var store: URL? = FileKind.of(url.path) == .sqliteStore ? url : nil
        if byTables, store == nil {
            // An archive's tables are the store it restores to.
            let folder = workDirectory.appendingPathComponent("\(label)-restored")
            let work = workDirectory.appendingPathComponent("\(label)-import")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let restored = folder.appendingPathComponent("default.store")
            var restore = Importer.Options()
            restore.keys = keys
            _ = try Importer.run(archive: url.path, into: restored, options: restore, workDirectory: work)
            store = restored
        }
        if let store {
            archive = workDirectory.appendingPathComponent("\(label)\(byTables ? "-tables" : "").qbak")
            var options = Exporter.Options(createdAt: 0, compression: .none)
            options.byTables = byTables
            if !keys.isEmpty {
                // Keys given: an archive may be encrypted, and the scratch archive made of what it
                // restored must not be plaintext on disk. A key made for this run, and forgotten.
                let scratchKey = AgeX25519Identity.generate()
                options.recipients = [.x25519(scratchKey.recipient)]
                archiveKeys = ArchiveKeys(identities: [.x25519(scratchKey)])
            }
            _ = try Exporter.export(storeAt: store, to: .file(archive, overwrite: true), options: options)
        }
        var side = Side(kind: "", entityNames: [])
        var modelCache: Data?
        _ = try ArchiveReader(path: archive.path, displayPath: url.path, keys: archiveKeys).read(
            onManifest: { manifest in
                side.kind = manifest.source.schema
                side.entityNames = manifest.entities.map(\.name)
                if side.kind == ArchiveManifest.Source.timeQuestSchema {
                    side.schema = TimeQuestSchemas.schema(forVersion: manifest.effectiveSchemaVersion)
                }
            },
            onRecordLine: { member, _, line in
                let members = try JSONLine.parseObject(line)
                side.records[member.name, default: []].append(
                    Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first }))
            },
            onFile: { member, data in if member.path == ArchiveManifest.modelCachePath { modelCache = data } })
        if side.kind == ArchiveManifest.Source.modelSchema, let modelCache {
            // Without a readable model, records are still matched by cloudID and content.
            side.schema = (try? ModelCacheDecoder.decode(modelCache)).map { Schema(model: $0) }
        }
        return side
    }

    static func text(_ value: JSONValue?) -> String {
        guard let value else { return "(none)" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
    }

    // MARK: How records are recognised

    /// One entity's identity keys and relationships, from whichever side describes it.
    struct Plan {
        struct Key {
            var kind: String
            var fields: [String]
            var isCloudID = false
        }

        /// The table (root entity) whose `_pk`s this entity's records use.
        var root: String
        var keys: [Key] = []
        var isSingleton = false
        /// Properties holding other records' `_pk`s, with the root entity of the records they name.
        var references: [String: String] = [:]
        /// The references that are to-many (an array of `_pk`s): not part of a record's content key.
        var toMany: Set<String> = []
        /// A table's rows (a generic archive's): no model says what identifies them, so rows left
        /// unmatched are, last, matched by `_pk`.
        var byTables = false
    }

    /// How one entity's records paired up: indices into A's and B's records.
    struct EntityMatch {
        var pairs: [(Int, Int)] = []
        var onlyInA: [Int] = []
        var onlyInB: [Int] = []
        var used: [String] = []
        var tried: [String] = []
    }

    /// Matched records' `_pk`s, B's to A's, by root entity: a relationship in B is compared by the
    /// A record it names.
    struct Matches {
        var bToA: [String: [Int64: Int64]] = [:]
    }

    static func schemas(_ left: Side, _ right: Side) -> [Schema] { [right.schema, left.schema].compactMap { $0 } }

    static func root(of name: String, in schemas: [Schema]) -> String {
        var current = name
        var seen: Set<String> = [name]
        while let parent = schemas.lazy.compactMap({ $0.entity(named: current)?.superentity }).first, seen.insert(parent).inserted {
            current = parent
        }
        return current
    }

    static func plan(for name: String, _ left: Side, _ right: Side, byTables generic: Bool) -> Plan {
        let schemas = schemas(left, right)
        var plan = Plan(root: root(of: name, in: schemas))
        plan.byTables = generic
        // A generic archive has columns: ZCLOUDID is the cloudID attribute's.
        plan.keys.append(
            Plan.Key(
                kind: "cloudID", fields: [generic ? "Z" + Entity.cloudIDAttribute.uppercased() : Entity.cloudIDAttribute], isCloudID: true))
        guard !generic, let schema = schemas.first(where: { $0.entity(named: name) != nil }), let entity = schema.entity(named: name) else {
            return plan
        }
        var lineage = [entity]
        while let parent = lineage.last?.superentity.flatMap({ schema.entity(named: $0) }),
            !lineage.contains(where: { $0.name == parent.name })
        {
            lineage.append(parent)
        }
        for tuple in lineage.flatMap(\.uniquenessConstraints) where !tuple.isEmpty {
            plan.keys.append(Plan.Key(kind: "uniqueness constraint (\(tuple.joined(separator: ", ")))", fields: tuple))
        }
        if !entity.identity.naturalKey.isEmpty {
            plan.keys.append(
                Plan.Key(kind: "natural key (\(entity.identity.naturalKey.joined(separator: ", ")))", fields: entity.identity.naturalKey))
        }
        plan.isSingleton = entity.identity.singletonCloudID != nil
        for relationship in lineage.flatMap(\.relationships) {
            plan.references[relationship.name] = root(of: relationship.destination, in: schemas)
            if relationship.isToMany { plan.toMany.insert(relationship.name) }
        }
        return plan
    }

    /// Entities whose records others name first, so that a relationship compares matched records.
    static func order(_ names: Set<String>, _ left: Side, _ right: Side) -> [String] {
        var remaining = names.sorted()
        var ordered: [String] = []
        var plans: [String: Plan] = [:]
        for name in remaining { plans[name] = plan(for: name, left, right, byTables: false) }
        while !remaining.isEmpty {
            let index =
                remaining.firstIndex { name in
                    let toOne = plans[name]?.references.filter { !(plans[name]?.toMany.contains($0.key) ?? false) } ?? [:]
                    let named = Set(toOne.values).subtracting([plans[name]?.root ?? ""])
                    return !remaining.contains { other in other != name && named.contains(plans[other]?.root ?? other) }
                } ?? 0  // a cycle: alphabetical
            ordered.append(remaining.remove(at: index))
        }
        return ordered
    }

    static func primaryKey(_ record: Record) -> Int64 {
        if case .integer(let key)? = record[RecordJSON.primaryKeyKey] { return key }
        return .min
    }

    /// A field's value, in B translated to the A record it names when it is a relationship.
    static func value(_ record: Record, _ field: String, plan: Plan, matches: Matches?) -> JSONValue {
        let value = record[field] ?? .null
        guard let matches, let target = plan.references[field] else { return value }
        func translated(_ value: JSONValue) -> JSONValue {
            guard case .integer(let key) = value else { return value }
            return matches.bToA[target]?[key].map { .integer($0) } ?? .string("unmatched _pk \(key) of B")
        }
        switch value {
        case .array(let keys):
            return .array(keys.map(translated).sorted { text($0) < text($1) })
        default:
            return translated(value)
        }
    }

    static let ignored: Set<String> = [RecordJSON.primaryKeyKey, RecordJSON.optKey, "Z_OPT"]

    static func sharedFields(_ a: [Record], _ b: [Record]) -> (shared: [String], onlyA: Set<String>, onlyB: Set<String>) {
        let keysA = Set(a.flatMap(\.keys)).subtracting(ignored)
        let keysB = Set(b.flatMap(\.keys)).subtracting(ignored)
        return (keysA.intersection(keysB).sorted(), keysA.subtracting(keysB), keysB.subtracting(keysA))
    }

    /// Pairs A's records with B's by the plan's keys, each tried on the records the ones before it left.
    static func match(_ a: [Record], _ b: [Record], plan: Plan, matches: inout Matches) -> EntityMatch {
        let shared = sharedFields(a, b).shared
        // A's values as they are; B's relationships as the A records they name.
        let current = matches
        func values(_ record: Record, _ fields: [String], side: Int) -> [JSONValue] {
            fields.map { value(record, $0, plan: plan, matches: side == 0 ? nil : current) }
        }
        var result = EntityMatch()
        var unmatched = [Set(a.indices), Set(b.indices)]
        func pair(_ kind: String, _ candidates: [(Int, Int)]) {
            result.tried.append(kind)
            guard !candidates.isEmpty else { return }
            for (i, j) in candidates {
                unmatched[0].remove(i)
                unmatched[1].remove(j)
                result.pairs.append((i, j))
            }
            result.used.append(kind)
        }
        for key in plan.keys where key.fields.allSatisfy(shared.contains) {
            // A key identifies a record only when it has a value on it that no other record of its
            // side shares (a cloudID also well-formed: a shared one is a default a migration left).
            func index(_ records: [Record], side: Int) -> [String: Int] {
                var seen: [String: [Int]] = [:]
                for (i, record) in records.enumerated() {
                    let parts = values(record, key.fields, side: side)
                    if parts.contains(.null) { continue }
                    if key.isCloudID {
                        guard case .string(let id) = parts[0], DeterministicID.isWellFormed(id) else { continue }
                    }
                    seen[text(.array(parts)), default: []].append(i)
                }
                return seen.compactMapValues { $0.count == 1 ? $0[0] : nil }
            }
            let left = index(a, side: 0).filter { unmatched[0].contains($0.value) }
            let right = index(b, side: 1).filter { unmatched[1].contains($0.value) }
            pair(key.kind, left.compactMap { id, i in right[id].map { (i, $0) } })
        }
        if plan.isSingleton, unmatched[0].count == 1, unmatched[1].count == 1, let i = unmatched[0].first, let j = unmatched[1].first {
            pair("singleton", [(i, j)])
        }
        // Then every value and to-one equal; equal records on one side pair with equal ones on the
        // other in `_pk` order.
        let content = shared.filter { !plan.toMany.contains($0) }
        var byContent: [String: [Int]] = [:]
        for i in unmatched[0].sorted(by: { primaryKey(a[$0]) < primaryKey(a[$1]) }) {
            byContent[text(.array(values(a[i], content, side: 0))), default: []].append(i)
        }
        var equal: [(Int, Int)] = []
        for j in unmatched[1].sorted(by: { primaryKey(b[$0]) < primaryKey(b[$1]) }) {
            let id = text(.array(values(b[j], content, side: 1)))
            if let i = byContent[id]?.first {
                byContent[id]?.removeFirst()
                equal.append((i, j))
            }
        }
        pair("content", equal)
        if plan.byTables {
            let rest = Dictionary(unmatched[0].map { (primaryKey(a[$0]), $0) }, uniquingKeysWith: { first, _ in first })
            pair("_pk", unmatched[1].compactMap { j in rest[primaryKey(b[j])].map { ($0, j) } })
        }
        for (i, j) in result.pairs { matches.bToA[plan.root, default: [:]][primaryKey(b[j])] = primaryKey(a[i]) }
        result.onlyInA = unmatched[0].sorted { primaryKey(a[$0]) < primaryKey(a[$1]) }
        result.onlyInB = unmatched[1].sorted { primaryKey(b[$0]) < primaryKey(b[$1]) }
        return result
    }

    /// What differs between the paired records, and which records only one side has.
    static func changes(_ name: String, _ a: [Record], _ b: [Record], plan: Plan, match: EntityMatch, matches: Matches) -> EntityDiff {
        let (shared, onlyA, onlyB) = sharedFields(a, b)
        func label(_ record: Record) -> String {
            var text = "_pk \(primaryKey(record))"
            let cloud = plan.keys.first(where: \.isCloudID).flatMap { record[$0.fields[0]] }
            if case .string(let id)? = cloud, DeterministicID.isWellFormed(id) { text += " (cloudID \(id))" }
            return text
        }
        var changed: [(Int64, Changed)] = []
        for (i, j) in match.pairs {
            let (old, new) = (a[i], b[j])
            let fields = shared.compactMap { field -> FieldChange? in
                value(old, field, plan: plan, matches: nil) == value(new, field, plan: plan, matches: matches)
                    ? nil : FieldChange(field: field, old: text(old[field]), new: text(new[field]))
            }
            guard !fields.isEmpty else { continue }
            let moved = primaryKey(old) == primaryKey(new) ? "" : ", _pk \(primaryKey(new)) in B"
            changed.append((primaryKey(old), Changed(identity: label(old) + moved, fields: fields)))
        }
        // `_pk`s in numeric order: 9 before 10.
        return EntityDiff(
            name: name, matchedBy: match.used.isEmpty ? match.tried.first ?? "content" : match.used.joined(separator: ", "),
            added: match.onlyInB.map { label(b[$0]) }, removed: match.onlyInA.map { label(a[$0]) },
            changed: changed.sorted { $0.0 < $1.0 }.map(\.1),
            fieldsOnlyInB: (a.isEmpty || b.isEmpty ? [] : onlyB).sorted(),
            fieldsOnlyInA: (a.isEmpty || b.isEmpty ? [] : onlyA).sorted())
    }
}
