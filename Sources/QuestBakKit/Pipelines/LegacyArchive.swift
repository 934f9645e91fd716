import CoreDataStore
import Crypto
import Foundation
import GRDB
import QuestBakArchive

/// An archive of format 1 or 2 (TimeQuest's: `source.schema` "timequest", written by an app
/// profile's version), read for the one restore (`StatementRestore`). All that sets these archives
/// apart lives here, behind one seam: which versions the lines are read with and written as, the
/// statements that make the target's tables (the archive carries none), the model its records are
/// laid out by, how a line becomes a record (format 1 has no `_opt`; every property is written; a
/// to-many is refused; `--allow-newer` keeps what the target cannot store for the report), and what
/// `Z_PRIMARYKEY`, `Z_METADATA` and `Z_MODELCACHE` get. The restore itself, its repairs, digests
/// and read-back, are the one path's.
///
/// `--to-version` (a 1.0.0 archive restored as 2.0.0): the records are laid out by the target's
/// tables and the repair pass fills what the source did not have (defaults, cloudIDs), in the one
/// transaction, rather than a restore as the source's version followed by a migration. That keeps
/// the reports and stores byte for byte what they were (the golden dumps, the repair logs), and
/// the records are those `migrate` gives (DiffCommandTests.testMigrateAndImportToV2GiveTheSameRecords).
struct LegacyArchive {
    var manifest: ArchiveManifest
    var source: ModelVersion
    var target: ModelVersion
    /// Archive schema newer than any known one, read because `allowNewer` was given.
    var newerSource: Bool
    var options: Importer.Options
    var createdAt: Double
    /// The template store's metadata and model cache, read once.
    var template: (path: String, metadata: StoreMetadata, modelCache: Data?)?
    /// Each source entity's stored property names, which every line must have: made once, not
    /// sorted again for every line.
    private var requiredKeys: [String: [String]] = [:]
    /// What each key of a line is, by target entity and property name: looked up once per value,
    /// so made once.
    private var targetProperties: [String: [String: LineProperty]] = [:]

    /// A key of a record line, as the target's model has it.
    enum LineProperty: Sendable {
        case attribute(AttributeKind)
        case toOne(destination: String)
        case toMany(destination: String, inverse: String?)
    }

    init(manifest: ArchiveManifest, archive: String, options: Importer.Options) throws {
        self.manifest = manifest
        self.options = options
        guard manifest.source.schema == ArchiveManifest.Source.knownSchema else {
            throw ImportError.notImportable(
                archive: archive,
                reason:
                    "it is a generic archive of another app's store (\(UntrustedText.display(manifest.source.schema))); only TimeQuest archives can be restored"
            )
        }
        let version = manifest.effectiveSchemaVersion
        let schemas = options.schemas
        let supported = schemas.map(\.versionIdentifier)
        guard let newest = schemas.last else {
            // The library applies no app's profile unasked: its caller passes the ones it reads.
            throw ImportError.notImportable(
                archive: archive,
                reason:
                    "it is written by TimeQuest's schema \(version) (format \(manifest.formatVersion)), and no app profile was given to read it by (Importer.Options.profiles: AppProfile.timeQuest)"
            )
        }
        if let known = schemas.first(where: { $0.versionIdentifier == version }) {
            source = known
            newerSource = false
        } else if !VersionIdentifier.isNewer(version, thanAll: supported) {
            throw ArchiveError.unknownSchemaVersion(path: archive, found: version, known: supported)
        } else if options.allowNewer {
            source = newest
            newerSource = true
        } else {
            throw ArchiveError.unsupportedSchemaVersion(path: archive, found: version, supported: supported)
        }
        if let requested = options.targetVersion {
            guard let schema = schemas.first(where: { $0.versionIdentifier == requested }) else {
                throw ImportError.unknownTargetVersion(version: requested, supported: supported)
            }
            target = schema
        } else {
            target = source
        }
        guard !VersionIdentifier.isNewer(source.versionIdentifier, than: target.versionIdentifier) else {
            throw ImportError.downgrade(archive: archive, from: source.versionIdentifier, to: target.versionIdentifier)
        }
        if !newerSource {
            for member in manifest.entities where source.entity(named: member.name) == nil {
                throw ImportError.notImportable(archive: archive, reason: "entity \(member.name) is not part of schema \(version)")
            }
            // A missing member is not an empty entity: an archive of a known schema lists them all.
            for entity in source.entities where !manifest.entities.contains(where: { $0.name == entity.name }) {
                throw ImportError.notImportable(
                    archive: archive,
                    reason:
                        "its manifest lists no member for entity \(entity.name) of schema \(version) (an empty entity is listed with count 0)"
                )
            }
        }
        let created = DateText.secondsSinceReferenceDate(iso8601: manifest.createdAt)
        guard let created else {
            throw ArchiveError.notAQuestbakArchive(
                path: archive, reason: "createdAt \"\(manifest.createdAt)\" is not an ISO 8601 UTC date")
        }
        createdAt = created
        requiredKeys = Dictionary(source.entities.map { ($0.name, $0.storedPropertyNames) }, uniquingKeysWith: { first, _ in first })
        for entity in target.entities {
            var properties: [String: LineProperty] = [:]
            for relationship in entity.relationships {
                properties[relationship.name] =
                    relationship.isToMany
                    ? .toMany(destination: relationship.destination, inverse: relationship.inverse)
                    : .toOne(destination: relationship.destination)
            }
            for attribute in entity.attributes {
                properties[attribute.name] = .attribute(target.declaredKind(of: attribute, in: entity.name))
            }
            targetProperties[entity.name] = properties
        }
        if let url = options.template {
            let snapshot = try StoreSnapshot(storeAt: url)
            template = try snapshot.read { db in
                (url.path, try StoreReader.metadata(db, path: url.path), try StoreReader.modelCache(db))
            }
        }
    }

    /// One record line, decoded and checked: the row to insert (none when its entity is not
    /// the target's), its entity's plan in the target's layout (nil when it has none there), and
    /// what the target cannot store, for the report.
    struct DecodedLine {
        var entity: String?
        var plan: ModelLayout.EntityPlan?
        var row: Row?
        var unstorable: [RepairEntry] = []
    }

    /// A record's row: its key, `Z_OPT`, and its column values in the order of `plan.fields` then
    /// `plan.toOne` (a property the archive did not have, a newer target's, is null until the
    /// repairs fill it).
    struct Row {
        var primaryKey: Int64
        var opt: Int64?
        var values: [StoredValue]
    }

    /// Where each key of an entity's lines goes: what the target's model says it is, and which
    /// columns of the entity's row hold it (by index into `Row.values`). Made once the target's
    /// tables are laid out, so that a line's value goes to its column by one look-up, not through
    /// a record's dictionary of values looked up again for each column.
    struct LineColumns: Sendable {
        struct Key: Sendable {
            var property: LineProperty
            var columns: [Int]
        }
        /// A class: a line looks its entity up and reads it, and a struct of arrays and
        /// dictionaries would be copied (retained and released member by member) for each line.
        final class Entity: Sendable {
            let plan: ModelLayout.EntityPlan?
            let keys: [String: Key]
            /// The keys an export of the source's version writes, in its order (`_pk`, `_opt`
            /// from format 2, then every stored property: `storedPropertyNames`), and where each
            /// property's value goes; nil when lines are read by name only (two keys the same,
            /// or a property the target does not have).
            let keysInOrder: JSONLine.KeysInOrder?
            let slotsInOrder: [Key]

            init(plan: ModelLayout.EntityPlan?, keys: [String: Key], keysInOrder: JSONLine.KeysInOrder?, slotsInOrder: [Key]) {
                self.plan = plan
                self.keys = keys
                self.keysInOrder = keysInOrder
                self.slotsInOrder = slotsInOrder
            }
        }
        var entities: [String: Entity] = [:]
    }

    /// The columns of each target entity's lines in `layout` (the target's tables). `byPosition`
    /// false reads every line by name (the tests compare the two ways).
    func lineColumns(_ layout: ModelLayout, byPosition: Bool = true) -> LineColumns {
        var columns = LineColumns()
        let leadingKeys = [RecordJSON.primaryKeyKey] + (manifest.recordLinesCarryOpt ? [RecordJSON.optKey] : [])
        for (name, properties) in targetProperties {
            let plan = layout.entity(named: name)
            var keys: [String: LineColumns.Key] = [:]
            for (key, property) in properties {
                var indexes: [Int] = []
                if let plan {
                    indexes =
                        plan.fields.indices.filter { plan.fields[$0].path[0] == key }
                        + plan.toOne.indices.filter { plan.toOne[$0].name == key }.map { plan.fields.count + $0 }
                }
                keys[key] = LineColumns.Key(property: property, columns: indexes)
            }
            // A line is read by position only where reading it by name would look each key up
            // and find it: every key distinct (`KeysInOrder`), every property the target's.
            var keysInOrder: JSONLine.KeysInOrder?
            var slotsInOrder: [LineColumns.Key] = []
            if byPosition, let names = requiredKeys[name] {
                let slots = names.compactMap { keys[$0] }
                if slots.count == names.count, let inOrder = JSONLine.KeysInOrder(leadingKeys + names) {
                    keysInOrder = inOrder
                    slotsInOrder = slots
                }
            }
            columns.entities[name] = LineColumns.Entity(plan: plan, keys: keys, keysInOrder: keysInOrder, slotsInOrder: slotsInOrder)
        }
        return columns
    }

    // MARK: The seam: what the one restore needs of a format 1 or 2 archive

    /// The schema version of the store written.
    var schemaVersion: String { target.versionIdentifier }

    /// Every statement of the new store, in order: the target's entity tables and their indexes,
    /// as Core Data makes them for the target's model, then Core Data's bookkeeping and history
    /// tables (what fixtures of the version are written with, too).
    func statements(archive: String) throws -> [String] {
        let tables: ModelTables
        do {
            tables = try ModelTables(model: target.compiled)
        } catch {
            throw ImportError.notImportable(
                archive: archive,
                reason: "schema \(target.versionIdentifier) does not lay out: \((error as? LocalizedError)?.errorDescription ?? "\(error)")"
            )
        }
        return tables.createStatements + CoreDataSQL.bookkeeping + CoreDataSQL.history
    }

    /// The target's entities in `Z_ENT` order, which is the declaration's (by name).
    var entityNames: [String] { target.entities.map(\.name) }

    /// Numbers the target's entities in `Z_PRIMARYKEY` (`Z_MAX` 0 until the records are in), so
    /// that the store's tables can be laid out by the model before the first record.
    func createEntityKeys(_ db: Database) throws {
        for (name, number) in numberedEntities {
            try CoreDataSQL.insertEntityKey(db, number: number, name: name, maximumPrimaryKey: 0)
        }
    }

    /// The numbers `createEntityKeys` gives the target's entities, by name.
    var entityNumbers: [String: Int64] {
        Dictionary(numberedEntities, uniquingKeysWith: { first, _ in first })
    }

    /// The target's entities in its order, numbered from 1.
    private var numberedEntities: [(String, Int64)] {
        target.entities.enumerated().map { ($1.name, Int64($0 + 1)) }
    }

    /// The store's tables laid out by the target's model (what a store of the version carries, or
    /// is read by when it carries none); a field the model calls transformable is the typed array
    /// the version says it is, as an export of the store reads it.
    /// `numbered`: take the entities' numbers from `entityNumbers`, not from `Z_PRIMARYKEY` (a
    /// store whose `Z_PRIMARYKEY` is made after its records).
    func layout(_ db: Database, archive: String, numbered: Bool = false) throws -> ModelLayout {
        do {
            return try target.layout(db, path: archive, checkRows: false, entityNumbers: numbered ? entityNumbers : nil)
        } catch StoreError.noModel(_, let problem) {
            throw ImportError.notImportable(archive: archive, reason: "schema \(target.versionIdentifier) does not lay out: \(problem)")
        }
    }

    /// Once the records are in and repaired: `Z_MAX` per entity, the largest key inserted or the
    /// archive's own (which deletes leave above the largest key), a raise above the archive's
    /// said in the log; Core Data's history entities when anything is stored (it registers them
    /// with the first save that stores anything).
    func finishEntityKeys(_ db: Database, inserted: [String: Int64], log: RepairLog) throws {
        let floors = Dictionary(manifest.entities.map { ($0.name, $0.maximumPrimaryKey) }, uniquingKeysWith: max)
        var anyStored = false
        for (index, entity) in target.entities.enumerated() {
            let largest = inserted[entity.name] ?? 0
            if let floor = floors[entity.name], largest > floor {
                // Z_MAX below a record's key would make Core Data hand out that key again.
                try log.record(
                    RepairEntry(
                        rule: .maximumPrimaryKey, kind: .bookkeeping, entity: entity.name, primaryKey: largest, cloudID: nil,
                        field: CoreDataSQL.maxColumn, old: .value(.integer(floor)), new: .value(.integer(largest))))
            }
            try db.execute(
                sql: "UPDATE \(CoreDataSQL.primaryKeyTable) SET \(CoreDataSQL.maxColumn) = ? WHERE \(CoreDataSQL.entityColumn) = ?",
                arguments: [max(largest, floors[entity.name] ?? 0), index + 1])
            if try StoreReader.rowCount(db, table: entity.tableName) > 0 { anyStored = true }
        }
        if anyStored {
            for (number, name) in CoreDataSQL.historyEntities {
                try CoreDataSQL.insertEntityKey(db, number: number, name: name, maximumPrimaryKey: 0)
            }
        }
    }

    /// Writes `Z_METADATA` (and its change, when the metadata is not the archive's, to the log)
    /// and `Z_MODELCACHE`; returns the note saying whose metadata it is, and the digests of the
    /// metadata and cache written, which the read-back checks.
    func writeMetadata(
        _ db: Database, files: [String: Data], archive: String, log: RepairLog
    ) throws -> (
        note: String?, files: [String: String]
    ) {
        let (metadata, note, computed) = try self.metadata(archiveFiles: files, archive: archive)
        if computed, let note {
            // The store's metadata is not the archive's: a change to the store, so an entry
            // of the report (old: the version the archive's metadata names, if any).
            let carried = try files[ArchiveManifest.metadataPath].map { try StoreMetadata(uuid: "", encodedPlist: $0) }
            try log.record(
                RepairEntry(
                    rule: .metadata, kind: .bookkeeping, entity: CoreDataSQL.metadataTable, primaryKey: 1, cloudID: nil, field: "Z_PLIST",
                    old: .value(carried.map { .stringArray($0.versionIdentifiers) } ?? .null),
                    new: .value(.string(note))))
        }
        let plist = metadata.encodedPlist
        try CoreDataSQL.insertMetadata(db, uuid: metadata.uuid, plist: plist)
        var written = [ArchiveManifest.metadataPath: SHA256.hash(data: plist).hexString]
        if let cache = try modelCache(archiveFiles: files) {
            try CoreDataSQL.insertModelCache(db, cache)
            written[ArchiveManifest.modelCachePath] = SHA256.hash(data: cache).hexString
        }
        return (note, written)
    }

    /// Decodes one record line (on any thread: it touches neither the store nor the log); what
    /// the target cannot store is kept for the report (`--allow-newer`) or refused.
    ///
    /// A line whose keys are exactly those an export of the source's version writes, in its
    /// order, is read by position (`JSONLine.parseValues`: no `String` of a key, no look-up by
    /// name); any other line by name, as every line was before. *Why both ways give the same row
    /// or the same first error:* the parser refuses a key written twice, so a line whose keys are
    /// exactly the expected ones (distinct, each the target's) holds each once: every look-up by
    /// name finds the member at its position, the by-name loop visits the same keys in the same
    /// order, no key is unknown and none is missing. What is left are the same checks of the
    /// same values in the same order (`_pk`, `_opt`, then each property by `store`, the one
    /// function both ways call). `LegacyLineReadingTests` reads lines both ways and compares.
    func decode(
        line: Data, member: ArchiveManifest.EntityMember, lineNumber: Int, archive: String, columns: LineColumns
    ) throws -> DecodedLine {
        do {
            if let target = columns.entities[member.name], let keys = target.keysInOrder {
                let decoded = try line.withUnsafeBytes { raw in
                    let bytes = raw.bindMemory(to: UInt8.self)
                    return try JSONLine.parseValues(bytes, keys: keys).map {
                        try decodeInOrder($0, of: bytes, keys: keys, target: target, entity: member.name)
                    }
                }
                if let decoded { return decoded }
            }
            return try decodeByName(line: line, member: member, columns: columns)
        } catch let problem as LineProblem {
            throw ArchiveError.invalidLine(path: archive, member: member.path, line: lineNumber, reason: problem.reason)
        }
    }

    /// What is wrong with a line, said by the steps of `decode`, which names the line (the
    /// steps take no closure that holds the line's member and number): the model reader's error,
    /// whose `_pk` and `_opt` checks the steps share.
    private typealias LineProblem = ModelMemberEncoding.LineError

    /// A line whose values are those of `keys`, in order (`decode`). An attribute's value is
    /// stored by `JSONLine.MemberValue.storedValue`, the step another app's lines take too (a
    /// string of ASCII to a text or date property from its bytes, without a `String` made of
    /// it; any other value as `store` stores it); a relationship's through `store`.
    private func decodeInOrder(
        _ members: [JSONLine.MemberValue], of line: UnsafeBufferPointer<UInt8>, keys: JSONLine.KeysInOrder, target: LineColumns.Entity,
        entity: String
    ) throws -> DecodedLine {
        let primaryKey = try ModelMemberEncoding.LineDecoder.primaryKey(members[0].json(in: line))
        var opt: Int64? = 1
        let carriesOpt = manifest.recordLinesCarryOpt
        if carriesOpt { opt = try ModelMemberEncoding.LineDecoder.opt(members[1].json(in: line)) }
        let plan = target.plan
        var values = [StoredValue](repeating: .null, count: plan.map { $0.fields.count + $0.toOne.count } ?? 0)
        let first = carriesOpt ? 2 : 1
        for (index, slot) in target.slotsInOrder.enumerated() {
            let member = members[first + index]
            if case .attribute(let kind) = slot.property {
                let stored: StoredValue
                do {
                    stored = try member.storedValue(in: line, as: kind, exactSpelling: false)
                } catch let mismatch as ValueJSON.TypeMismatch {
                    throw Self.mismatch(keys.names[first + index], mismatch)
                }
                for column in slot.columns { values[column] = stored }
            } else {
                try Self.store(member.json(in: line), key: keys.names[first + index], slot: slot, into: &values)
            }
        }
        return DecodedLine(entity: entity, plan: plan, row: Row(primaryKey: primaryKey, opt: opt, values: values))
    }

    private static func mismatch(_ key: String, _ mismatch: ValueJSON.TypeMismatch) -> LineProblem {
        LineProblem(reason: "\(key) must be \(mismatch.expected), found \(mismatch.found)")
    }

    /// A property's value checked and put into its columns: the one step both readings take.
    private static func store(
        _ json: JSONValue, key: String, slot: LineColumns.Key, into values: inout [StoredValue]
    ) throws {
        switch slot.property {
        case .attribute(let kind):
            let value: Value
            do {
                value = try ValueJSON.value(json, as: kind)
            } catch let mismatch as ValueJSON.TypeMismatch {
                throw Self.mismatch(key, mismatch)
            }
            let stored = ValueCoding.encode(value)
            for column in slot.columns { values[column] = stored }
        case .toMany(let destination, let inverse):
            // A to-many follows from its inverse's keys, so the format has no place for it:
            // a value given here would be dropped without a word.
            throw LineProblem(
                reason:
                    "\(key) is a to-many relationship, which a record does not carry (it follows from \(destination).\(inverse ?? "its inverse")); found \(json.typeName)"
            )
        case .toOne(let destination):
            // Any integer: a key that points at no record is an orphan, whatever its value.
            let stored: StoredValue
            switch json {
            case .null: stored = .null
            case .integer(let target): stored = .integer(target)
            default: throw LineProblem(reason: "\(key) must be the _pk of a \(destination) or null, found \(json.typeName)")
            }
            for column in slot.columns { values[column] = stored }
        }
    }

    /// Any line, its members looked up by name (`decode`).
    private func decodeByName(
        line: Data, member: ArchiveManifest.EntityMember, columns: LineColumns
    ) throws -> DecodedLine {
        var decoded = DecodedLine()
        let members: [(key: String, value: JSONValue)]
        do {
            members = try JSONLine.parseObject(line)
        } catch let error as JSONLine.SyntaxError {
            throw LineProblem(reason: error.lineReason)
        }
        let primaryKey = try ModelMemberEncoding.LineDecoder.primaryKey(members.first(where: { $0.key == RecordJSON.primaryKeyKey })?.value)
        var opt: Int64? = 1
        if manifest.recordLinesCarryOpt {
            opt = try ModelMemberEncoding.LineDecoder.opt(members.first(where: { $0.key == RecordJSON.optKey })?.value)
        }
        guard let target = columns.entities[member.name] else {
            // Only with allowNewer: an entity the target does not have is kept in the report.
            decoded.unstorable.append(
                RepairEntry(
                    rule: .unknownProperty, kind: .unstorable, entity: member.name, primaryKey: primaryKey, cloudID: nil, field: nil,
                    old: .value(.string(String(decoding: line, as: UTF8.self))), new: nil))
            return decoded
        }
        let plan = target.plan
        var values = [StoredValue](repeating: .null, count: plan.map { $0.fields.count + $0.toOne.count } ?? 0)
        let carriesOpt = manifest.recordLinesCarryOpt
        let entity = member.name
        for (key, json) in members where key != RecordJSON.primaryKeyKey && !(carriesOpt && key == RecordJSON.optKey) {
            if let slot = target.keys[key] {
                try Self.store(json, key: key, slot: slot, into: &values)
            } else if newerSource {
                decoded.unstorable.append(
                    RepairEntry(
                        rule: .unknownProperty, kind: .unstorable, entity: entity, primaryKey: primaryKey, cloudID: nil,
                        field: key,
                        old: .value(Self.reportable(json)), new: nil))
            } else {
                throw LineProblem(reason: "unknown property \(key) for \(entity) in schema \(source.versionIdentifier)")
            }
        }
        // Every property is written, null when empty: a missing key is damage, not a null.
        if !newerSource, let names = requiredKeys[member.name] {
            for name in names where !members.contains(where: { $0.key == name }) {
                throw LineProblem(reason: "\(name) is missing (every property of \(entity) is written, null when empty)")
            }
        }
        decoded.entity = entity
        decoded.plan = plan
        decoded.row = Row(primaryKey: primaryKey, opt: opt, values: values)
        return decoded
    }

    static func reportable(_ json: JSONValue) -> Value {
        switch json {
        case .null: return .null
        case .boolean(let flag): return .boolean(flag)
        case .integer(let number): return .integer(number)
        case .number(let number): return .double(number)
        case .string(let text): return .string(text)
        case .array, .object: return .string("\(json)")
        }
    }

    /// Metadata: from the template store; else the archive's own when the version is unchanged
    /// and its hashes are the target's (so the app sees the same store); else computed. Any
    /// metadata but the archive's own comes with a note saying so.
    func metadata(archiveFiles: [String: Data], archive: String) throws -> (StoreMetadata, note: String?, computed: Bool) {
        let uuid = manifest.source.storeUUID
        // Metadata the archive carries but that cannot be read is damage: computing new
        // metadata in its place would change the store without a word.
        var carried: StoreMetadata?
        if let bytes = archiveFiles[ArchiveManifest.metadataPath] {
            let decoded: StoreMetadata
            do {
                decoded = try StoreMetadata(uuid: uuid, encodedPlist: bytes)
            } catch {
                throw ArchiveError.unexpectedMember(
                    path: archive, member: ArchiveManifest.metadataPath,
                    reason: "cannot be decoded as a binary property list: \((error as? LocalizedError)?.errorDescription ?? "\(error)")"
                )
            }
            guard case .dictionary = decoded.plist else {
                throw ArchiveError.unexpectedMember(
                    path: archive, member: ArchiveManifest.metadataPath, reason: "is a property list but not a dictionary of metadata")
            }
            carried = decoded
        }
        if let template {
            let metadata = template.metadata
            guard metadata.versionMatchingHashes(in: [target]) != nil else {
                throw ImportError.template(
                    path: template.path, reason: "its model hashes are not those of schema \(target.versionIdentifier)")
            }
            return (metadata.withUUID(uuid), "metadata taken from the template store \(template.path)", false)
        }
        let namesTarget = carried?.versionIdentifiers == [target.versionIdentifier]
        if source.versionIdentifier == target.versionIdentifier, !newerSource, let carried,
            carried.versionMatchingHashes(in: [target]) != nil,
            namesTarget
        {
            // Kept as the archive has them, even when they disagree; but said.
            if case .string(let plistUUID)? = carried.plist["NSStoreUUID"], plistUUID != uuid {
                return (
                    carried,
                    "Z_UUID \"\(UntrustedText.display(uuid))\" and the metadata's NSStoreUUID \"\(UntrustedText.display(plistUUID))\" differ, as the archive has them",
                    false
                )
            }
            return (carried, nil, false)
        }
        let why: String
        if carried == nil {
            why = "the archive has no metadata.plist"
        } else if source.versionIdentifier != target.versionIdentifier || newerSource {
            why = "the store is written as schema \(target.versionIdentifier), not \(manifest.effectiveSchemaVersion)"
        } else if !namesTarget {
            why = "the archive's metadata names version identifiers other than \(target.versionIdentifier)"
        } else {
            why = "the archive's metadata has model hashes other than schema \(target.versionIdentifier)'s"
        }
        let computed = StoreMetadata(
            model: target.compiled, uuid: uuid, frameworkVersion: manifest.source.frameworkVersion ?? StoreMetadata.defaultFrameworkVersion,
            carryingOver: carried)
        return (computed, "metadata computed for schema \(target.versionIdentifier): \(why)", true)
    }

    /// The compiled model travels only where it still describes the store.
    func modelCache(archiveFiles: [String: Data]) throws -> Data? {
        if let template { return template.modelCache }
        return source.versionIdentifier == target.versionIdentifier && !newerSource ? archiveFiles[ArchiveManifest.modelCachePath] : nil
    }
}
