import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// The merge itself, as SQL on one connection: `main` is a copy of the store (the merge's
/// result), `incoming` the archive restored into a store of the same layout. Nothing is ever
/// deleted from `main`.
///
/// 1. Every incoming record is matched to a store record by the layout's identity keys, or given
///    a new `Z_PK` above every key the store has used (the map: `mapTable`). Parents are matched
///    first, so a key that names a parent compares the parent's record in the store.
/// 2. Records only in the archive are inserted, each column that names a record translated
///    through the map; records in both are compared field by field: what the store lacks is
///    filled, a conflict is settled by the preference (or by the app profile's rule for that
///    property), a different cloudID is kept as the store has it and reported as superseded.
/// 3. Join-table links are added (a link the store has already stays one link), and `Z_MAX`
///    raised to the largest key.
///
/// The work is set-based: the map and the keys being compared live in SQLite's temp store, so
/// memory stays flat whatever the size of either side.
/// Core Data's column and table names, spelled once (`CoreDataSQL`).
private let keyColumn = CoreDataSQL.keyColumn
private let entityColumn = CoreDataSQL.entityColumn
private let optColumn = CoreDataSQL.optColumn
private let maxColumn = CoreDataSQL.maxColumn
private let nameColumn = CoreDataSQL.nameColumn
private let primaryKeyTable = CoreDataSQL.primaryKeyTable

struct RecordMerge {
    let db: Database
    let layout: MergeLayout
    let preference: Merger.Preference
    /// Entity name → the column that says which copy is newer (`--prefer newer`).
    let newerColumns: [String: String]
    let keepDistinctIDs: Bool
    /// The archive's cloudIDs were made by its restore (a migration from a version without
    /// them): CloudKit has none of them, so none is reported as superseded.
    var archiveCloudIDsAreMade = false
    let log: RepairLog
    let storePath: String
    /// Whether the merge may leave out a lookup it has shown would find nothing
    /// (`noCloudIDIsInBoth`), and read the records in both in place where it has shown that
    /// gives what the scratch table would (`storeKeysRise`): off only in tests, which compare
    /// the merge with and without.
    var usesShortcuts = true

    struct Counts {
        var inStore = 0
        var inArchive = 0
        var inserted = 0
        var changed = 0
        var matchedBy: [String: Int] = [:]
    }

    private(set) var counts: [String: Counts] = [:]
    private(set) var notes: [String] = []
    /// The table whose cloudIDs `temp.questbak_used` holds, if any.
    var usedCloudIDs: String?
    /// The store's references to no record before the merge and the archive's fields whose
    /// references each name a record, asked on other connections (`ReferenceChecks`); nil: asked
    /// here, on the merge's connection.
    var referenceChecks: ReferenceChecks?
    /// `noCloudIDIsInBoth` of each entity with a cloudID, asked on another connection
    /// (`CloudIDChecks`); nil: asked here.
    var cloudIDChecks: CloudIDChecks?
    /// By entity: whether every store cloudID is an identity (`cloudIDsAreIdentities`), as the
    /// matching's pass over the store's cloudIDs (`noCloudIDIsInBoth`) found it, where that pass ran.
    private(set) var storeCloudIDsShownIdentities: [String: Bool] = [:]

    mutating func run() throws {
        for table in layout.mappedTables {
            try db.execute(
                sql: "CREATE TEMP TABLE \(Self.mapName(table)) (incoming INTEGER PRIMARY KEY, store INTEGER NOT NULL, how INTEGER NOT NULL)"
            )
        }
        for table in layout.tables { try checkSameColumns(table) }
        // The store's count before the merge writes: asked here, where no other connection asks
        // it; asked beside (`ReferenceChecks`, of the store's copy, which nothing writes), it is
        // the same count whenever it is taken, so it is waited for only once the records are
        // merged. Waited for first, it kept the matching from starting until it came (at 1M
        // estimations, 0.3 s of the merge's thread asleep: the check shares the second core with
        // the read-back proof and the copy's integrity check).
        let danglingBeforeHere = referenceChecks == nil ? try danglingReferences() : nil
        do {
            try mergeRecords()
        } catch {
            // Its error first, as when the merge waited for it before anything else.
            if let checkError = referenceChecks?.danglingBefore.error() { throw checkError }
            throw error
        }
        let danglingBefore = try danglingBeforeHere ?? referenceChecks?.danglingBefore.value() ?? [:]
        // The proof that every reference the merge wrote was translated: none points at nothing
        // that did not before. A merge that inserted and changed no record wrote none (links go
        // to join tables, `Z_MAX` to Z_PRIMARYKEY), so its entity tables are as they were.
        let wroteRecords = counts.values.contains { $0.inserted > 0 || $0.changed > 0 }
        for (place, after) in try wroteRecords ? danglingReferences() : [:] where after > danglingBefore[place] ?? 0 {
            throw ImportError.verificationFailed(
                store: storePath, entity: place, expected: "\(danglingBefore[place] ?? 0) references to no record",
                found: "\(after)")
        }
    }

    /// Every entity matched, its records inserted and settled, the links added and `Z_MAX` raised.
    private mutating func mergeRecords() throws {
        for entity in layout.entities {
            var entityCounts = Counts()
            entityCounts.inStore = try count("main", entity)
            entityCounts.inArchive = try count("incoming", entity)
            counts[entity.name] = entityCounts
            try match(entity)
        }
        for entity in layout.entities {
            try reportDangling(entity)
            try insertNew(entity)
            try mergeMatched(entity)
        }
        for join in layout.joinTables { try addLinks(join) }
        try reportTablesNotMerged()
        for entity in layout.entities { try raiseMaximumKey(entity) }
    }

    /// By `table.column`: how many rows name a record their destination table does not hold.
    private func danglingReferences() throws -> [String: Int] {
        try Self.danglingReferences(db, Self.danglingReferenceQueries(layout))
    }

    /// `danglingReferences`'s count of each reference column (`table.column`, once each) of the
    /// `main` database's tables, as SQL: run on the merge's connection, or on one of the store's copy.
    static func danglingReferenceQueries(_ layout: MergeLayout) -> [(place: String, sql: String)] {
        var queries: [(place: String, sql: String)] = []
        for entity in layout.entities {
            for field in entity.fields {
                guard let reference = field.reference, !queries.contains(where: { $0.place == "\(entity.table).\(field.column)" })
                else { continue }
                queries.append(
                    (
                        "\(entity.table).\(field.column)",
                        """
                        SELECT count(*) FROM main.\(entity.table) r
                        WHERE r.\(field.column) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM main.\(reference) d WHERE d.\(keyColumn) = r.\(field.column))
                        """
                    ))
            }
        }
        return queries
    }

    static func danglingReferences(_ db: Database, _ queries: [(place: String, sql: String)]) throws -> [String: Int] {
        var found: [String: Int] = [:]
        for query in queries { found[query.place] = try Int.fetchOne(db, sql: query.sql) ?? 0 }
        return found
    }

    // MARK: 1. Identity

    private func count(_ schema: String, _ entity: MergeLayout.EntityPlan) throws -> Int { try Self.count(schema, entity, db: db) }

    /// How many records of `entity` the table in `schema` holds: the counts the matching and the
    /// cloudID checks beside it (`CloudIDChecks`) size their filters by.
    static func count(_ schema: String, _ entity: MergeLayout.EntityPlan, db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(schema).\(entity.table) r WHERE \(entity.rows("r"))") ?? 0
    }

    /// The store's and the archive's table must have the same columns: the
    /// archive was restored as the store's version, so anything else is a layout this merge does
    /// not know.
    private func checkSameColumns(_ table: String) throws {
        // In any order: a lightweight migration appends the columns it adds.
        let store = try columns(table, in: "main")
        let archive = try columns(table, in: "incoming")
        guard Set(store.map { $0.uppercased() }) == Set(archive.map { $0.uppercased() }) else {
            throw StoreError.notAStore(
                path: storePath,
                reason:
                    "its table \(table) has columns (\(store.joined(separator: ", "))) the archive's store has not (\(archive.joined(separator: ", ")))"
            )
        }
    }

    private func columns(_ table: String, in schema: String) throws -> [String] {
        try Row.fetchAll(db, sql: "PRAGMA \(schema).table_info(\(table))").map { $0["name"] as String }
    }

    /// The map of `table`'s records (`temp.` and its name): each archive record's key
    /// (`incoming`), the store key it was matched to or given (`store`), and how (`MapOrigin`).
    ///
    /// One table per store table, keyed by the archive's `Z_PK` as its rowid: it was one table
    /// for all, `WITHOUT ROWID`, keyed by the table's name and the archive's key, whose every
    /// lookup compared the name's text and every row held it. At 1M estimations, in `sqlite3`
    /// alone: the estimations' matching 0.93 → 0.61 s, the settling's pass over the records
    /// in both 0.44 → 0.18 s. *Why the rows and the lookups are the same:* the key was (table,
    /// archive key), so a table's rows are the rows of its own table here, one per archive key
    /// (a second row for a key fails either way, as a primary key's). `incoming` is an archive
    /// record's `Z_PK`, the rowid of its table (an integer, never NULL); `t.incoming = x` of an
    /// `INTEGER` column applies numeric affinity to an `x` of TEXT or none before it compares,
    /// as a rowid lookup (`OP_SeekRowid`) does, and a value that is no integer then matches no
    /// row either way.
    static func mapName(_ table: String) -> String { "temp.questbak_map_\(table)" }

    /// How a map row was made: its number in the map's `how`.
    enum MapOrigin: Int {
        case new = 0
        case singleton
        case cloudID, uniqueness, naturalKey, oneToOne, content

        init(_ kind: MergeLayout.IdentityKey.Kind) {
            switch kind {
            case .cloudID: self = .cloudID
            case .uniqueness: self = .uniqueness
            case .naturalKey: self = .naturalKey
            case .oneToOne: self = .oneToOne
            case .content: self = .content
            }
        }
    }

    /// SQL for the store key of the record `column` of `alias` names, in table `table`.
    private func translated(_ alias: String, _ column: String, to table: String) -> String {
        "(SELECT t.store FROM \(Self.mapName(table)) t WHERE t.incoming = \(alias).\(column))"
    }

    /// The archive's value of `field` as the store would hold it: a reference translated.
    private func incomingValue(_ field: MergeLayout.Field) -> String {
        field.reference.map { translated("i", field.column, to: $0) } ?? "i.\(field.column)"
    }

    /// SQL: the archive record `i` of `table` has no row in the map yet.
    private func unmatched(_ table: String) -> String {
        "NOT EXISTS (SELECT 1 FROM \(Self.mapName(table)) m WHERE m.incoming = i.\(keyColumn))"
    }

    private mutating func match(_ entity: MergeLayout.EntityPlan) throws {
        if entity.isSingleton {
            // One record per store: every copy of it is the store's (the lowest key, as dedup keeps).
            if let keeper = try Int64.fetchOne(db, sql: "SELECT min(\(keyColumn)) FROM main.\(entity.table) s WHERE \(entity.rows("s"))") {
                try db.execute(
                    sql: """
                        INSERT INTO \(Self.mapName(entity.table)) (incoming, store, how)
                        SELECT i.\(keyColumn), ?, \(MapOrigin.singleton.rawValue) FROM incoming.\(entity.table) i
                        WHERE \(entity.rows("i")) AND \(unmatched(entity.table))
                        """, arguments: [keeper])
                if db.changesCount > 0 { counts[entity.name]?.matchedBy["singleton", default: 0] += db.changesCount }
            }
        }
        for key in entity.keys {
            // A key matches only records no key before it matched: once none is left, the
            // others (each a scan, a sort and an index of the store's table) would find nothing.
            guard unmatchedCount(entity) > 0 else { break }
            try match(entity, by: key)
        }
        try assignNewKeys(entity)
    }

    /// How many archive records of `entity` no key has matched yet: the rows of `unmatched`,
    /// counted without a pass over the archive's table (two a table, a sixtieth of a merge). The
    /// map gets a row for a record of the entity only from the matching above, which counts each
    /// row it adds in `matchedBy`, for records of the entity's own rows, one row each (the map's
    /// key is the table and the record's key): so the records without one are those counted
    /// in the archive less those.
    private func unmatchedCount(_ entity: MergeLayout.EntityPlan) -> Int {
        guard let entityCounts = counts[entity.name] else { return 0 }
        return entityCounts.inArchive - entityCounts.matchedBy.values.reduce(0, +)
    }

    private mutating func match(_ entity: MergeLayout.EntityPlan, by key: MergeLayout.IdentityKey) throws {
        if key.kind == .content { return try matchByContent(entity, by: key) }
        let names = key.fields.indices.map { "k\($0)" }
        let isContent = key.kind == .content
        let cloud = entity.cloudIDColumn
        let withCloud = keepDistinctIDs && key.kind == .naturalKey && cloud != nil
        /// `alias`'s cloudID when it names one record of its side (`schema`), else NULL.
        func identity(_ alias: String, _ schema: String) -> String {
            guard let cloud else { return "NULL" }
            return """
                (CASE WHEN \(DeterministicID.wellFormedSQL("\(alias).\(cloud)")) AND \(alias).\(cloud) NOT IN (SELECT x.\(cloud) FROM \(schema).\(entity.table) x \
                WHERE \(entity.rows("x")) GROUP BY x.\(cloud) HAVING count(*) > 1) THEN \(alias).\(cloud) END)
                """
        }
        // A second device's records have cloudIDs of their own: none of the archive's is the
        // store's, and the key table of the store's cloudIDs (a copy and a sort of the column)
        // and one lookup per archive record would find nothing.
        if key.kind == .cloudID, let cloud, usesShortcuts {
            // Asked beside the matching where the merge started it (`CloudIDChecks`), else here.
            let shortcut =
                try cloudIDChecks?.answer(for: entity.name)
                ?? Self.noCloudIDIsInBoth(
                    column: cloud, of: entity.table, storeRows: entity.rows("s"), archiveRows: entity.rows("i"),
                    storeCount: counts[entity.name]?.inStore ?? 0, db: db)
            storeCloudIDsShownIdentities[entity.name] = shortcut.storeCloudIDsAreIdentities
            if shortcut.noneInBoth { return }
            // The store's own archive: every record paired with the store's of the same key.
            if let entityCounts = counts[entity.name], unmatchedCount(entity) == entityCounts.inArchive {
                let paired = try Self.pairedBySameKey(
                    column: cloud, of: entity.table, storeRows: entity.rows("s"), archiveRows: entity.rows("i"),
                    storeCount: entityCounts.inStore, archiveCount: entityCounts.inArchive,
                    storeCloudIDsAreIdentities: shortcut.storeCloudIDsAreIdentities, db: db)
                storeCloudIDsShownIdentities[entity.name] = paired.storeCloudIDsAreIdentities
                if paired.matchedEveryRecord {
                    counts[entity.name]?.matchedBy[key.kind.rawValue, default: 0] += entityCounts.inArchive
                    return
                }
            }
        }
        try db.execute(sql: "DROP TABLE IF EXISTS temp.questbak_key")
        // Columns without a declared type: no affinity, so values keep their storage class.
        try db.execute(
            sql: "CREATE TEMP TABLE questbak_key (pk INTEGER, \((names + (withCloud ? ["cloud"] : [])).joined(separator: ", ")))")
        let storeFilter = key.fields.map { isContent ? "1" : "s.\($0.column) IS NOT NULL" }
        try db.execute(
            sql: """
                INSERT INTO temp.questbak_key
                SELECT s.\(keyColumn), \((key.fields.map { "s.\($0.column)" } + (withCloud ? [identity("s", "main")] : [])).joined(separator: ", "))
                FROM main.\(entity.table) s WHERE \(entity.rows("s")) AND \(storeFilter.joined(separator: " AND "))
                """)
        try db.execute(sql: "CREATE INDEX temp.questbak_key_index ON questbak_key (\((names + ["pk"]).joined(separator: ", ")))")
        // `+` strips the archive column's affinity: values compare as stored, as in a unique index.
        let comparison = isContent ? "IS" : "="
        var conditions = zip(names, key.fields).map { "k.\($0) \(comparison) +\(incomingValue($1))" }
        if withCloud {
            // Only two identities that differ keep two records apart: a default (shared, or not a
            // UUID) on either side is none (`cloud` holds the store's identity, or NULL).
            conditions.append(
                "NOT (k.cloud IS NOT NULL AND \(identity("i", "incoming")) IS NOT NULL AND k.cloud <> \(identity("i", "incoming")))")
        }
        var found = "(SELECT k.pk FROM temp.questbak_key k WHERE \(conditions.joined(separator: " AND ")) ORDER BY k.pk LIMIT 1)"
        if key.kind == .cloudID {
            // A cloudID the store holds twice is a default, not an identity: the key table holds
            // every store record's cloudID, so its copies are counted at the lookup.
            found =
                "(SELECT CASE WHEN count(*) = 1 THEN min(k.pk) END FROM temp.questbak_key k WHERE \(conditions.joined(separator: " AND ")))"
        }
        // `OFFSET 0` keeps SQLite from flattening the inner query (it flattens none with an
        // OFFSET), which would copy `found`, a lookup, into the outer WHERE and ask it twice. The
        // map is asked last, only of the records that found one: a second device's find none.
        // Where no key before this one matched any record of the entity (`unmatchedCount`: the
        // map holds a row for one of its records only from its own matching, each counted),
        // every record is still unmatched, and the map is not asked at all: a second device's
        // records, none matched by cloudID, all find one by natural key.
        let noneMatched = unmatchedCount(entity) == counts[entity.name]?.inArchive && usesShortcuts
        try db.execute(
            sql: """
                INSERT INTO \(Self.mapName(entity.table)) (incoming, store, how)
                SELECT ipk, spk, \(MapOrigin(key.kind).rawValue) FROM (
                    SELECT i.\(keyColumn) AS ipk, \(found) AS spk FROM incoming.\(entity.table) i WHERE \(entity.rows("i")) LIMIT -1 OFFSET 0
                ) WHERE spk IS NOT NULL\(noneMatched ? "" : " AND NOT EXISTS (SELECT 1 FROM \(Self.mapName(entity.table)) m WHERE m.incoming = ipk)")
                """)
        var matched = db.changesCount
        if key.kind == .cloudID, let cloud, matched > 0,
            try !Self.cloudIDsAreIdentities(
                column: cloud, of: entity.table, in: "incoming", rows: entity.rows("i"), expectedCount: counts[entity.name]?.inArchive ?? 0,
                db: db)
        {
            // An archive record's cloudID is an identity only if well formed and no other archive
            // record's: the matches of those that are not are taken back (asked only once some
            // record matched, and only when the pass above could not rule it out, so neither a
            // second device, whose records match none, nor an archive whose cloudIDs are all
            // identities pays for the `GROUP BY` of the archive's table). The map's rows of this
            // table matched by cloudID are this statement's: each key runs once per entity, and
            // another entity of the table has other records.
            try db.execute(
                sql: """
                    DELETE FROM \(Self.mapName(entity.table)) WHERE how = \(MapOrigin(key.kind).rawValue) AND incoming IN (
                        SELECT i.\(keyColumn) FROM incoming.\(entity.table) i WHERE \(entity.rows("i"))
                        AND (\(DeterministicID.wellFormedSQL("i.\(cloud)")) AND i.\(cloud) IN (SELECT x.\(cloud) FROM incoming.\(entity.table) x
                             WHERE \(entity.rows("x")) GROUP BY x.\(cloud) HAVING count(*) = 1)) IS NOT 1)
                    """)
            matched -= db.changesCount
        }
        if matched > 0 { counts[entity.name]?.matchedBy[key.kind.rawValue, default: 0] += matched }
        try db.execute(sql: "DROP TABLE temp.questbak_key")
    }

    /// Whether every record (`rows`, of the alias `i`) of `table` in `schema` has in `column`
    /// a cloudID that is an identity on its side: well-formed text no other of the records has.
    /// For the archive's side, the cloudID key's filter (`wellFormedSQL`, and a `GROUP BY` of
    /// the column, a sort of the whole table) then passes every record, and is left out. Asked
    /// in one pass, as a restore's inserts are noted (`InsertedValues`): `isWellFormed` of the
    /// text is `wellFormedSQL`, and the values a Bloom filter flags, the only ones that may
    /// repeat, are looked up in SQL as the `GROUP BY` compares them. A collation declared in the
    /// table could make two different texts equal there: such a table is always asked in SQL.
    static func cloudIDsAreIdentities(
        column: String, of table: String, in schema: String, rows: String, expectedCount: Int, db: Database
    ) throws -> Bool {
        try CloudIDPass(
            column: column, of: table, in: schema, alias: "i", rows: rows, expectedCount: expectedCount, keepingTexts: false, db: db
        ).allIdentities
    }

    /// One read of an entity's cloudIDs on one side, for what two questions ask of the store's:
    /// whether every record's is an identity (`cloudIDsAreIdentities`, before the settling), and
    /// which texts the store holds (`noCloudIDIsInBoth`, in the matching). Where nothing is
    /// inserted between the two, the store's column is the same for both, and is read once.
    struct CloudIDPass {
        /// `cloudIDsAreIdentities`'s answer; where `keepingTexts`, before `suspects` are settled
        /// (by `noCloudIDIsInBoth`, in one pass with the archive's).
        var allIdentities: Bool
        /// The values the filter flagged while every one was an identity.
        var suspects: SuspectHashes
        /// Whether every non-NULL value is TEXT; then `texts` (if kept) holds each one's hash.
        var onlyText: Bool
        var texts: ProbableSet

        /// `rows` of the alias `alias`. `keepingTexts`: read on after the answer is no (for
        /// `texts`), until a value is neither NULL nor TEXT, and `suspects` left to the caller.
        ///
        /// *Why the answer is `cloudIDsAreIdentities`'s as it was asked alone:* the filter is
        /// sized by the same count and takes the same hashes in the same order (the records'
        /// order, NULLs none) up to the first record that is no identity, after which the answer
        /// is no whatever follows: so the same values are suspects, and the same SQL looks them up.
        /// The texts kept past that point are the store's side of `noCloudIDIsInBoth`, which read
        /// every non-NULL value until one was not TEXT: a Bloom filter's "contains" does not
        /// depend on the order its values came in.
        init(
            column: String, of table: String, in schema: String, alias: String, rows: String, expectedCount: Int, keepingTexts: Bool,
            db: Database
        ) throws {
            let collation = try CoreDataSQL.declaresCollation(db, table: table, schema: schema)
            // A collation declared in the table could make two different texts equal in SQL:
            // such a table's cloudIDs are never shown identities here, and are asked in SQL.
            var identities = !collation
            var texts = ProbableSet(expectedCount: identities || keepingTexts ? expectedCount : 0)
            var onlyText = true
            var suspects = SuspectHashes()
            let select = "SELECT \(alias).\(column) FROM \(schema).\(table) \(alias) WHERE \(rows)"
            if identities || keepingTexts {
                try ExactSQL.forEachRow(db, sql: select) { row in
                    guard identities || (keepingTexts && onlyText) else { return }
                    // A text is looked at in SQLite's buffer: a `Data` made for each of the
                    // store's cloudIDs was a fifth of this pass. Only a suspect is copied.
                    let hashed = row.withText(0) { bytes -> (seen: Bool, hash: UInt64) in
                        if identities && !DeterministicID.isWellFormed(bytes) { identities = false }
                        let hash = RecordMerge.hash(bytes)
                        return (texts.insert(hash), hash)
                    }
                    guard let hashed else {
                        if row[0] != .null { onlyText = false }
                        identities = false
                        return
                    }
                    guard identities, hashed.seen else { return }
                    if !suspects.add(hashed.hash, value: { row[0] }) { identities = false }
                }
            }
            self.texts = texts
            self.onlyText = onlyText
            allIdentities =
                try identities
                && (keepingTexts
                    || !suspects.anyRepeated(column: "\(alias).\(column)", rows: "FROM \(schema).\(table) \(alias) WHERE \(rows)", db: db))
            self.suspects = suspects
        }
    }

    /// Whether no archive record (`archiveRows`, alias `i`, of `incoming.table`) holds in
    /// `column` a value a store record (`storeRows`, alias `s`, of `main.table`) holds: then the
    /// cloudID key's lookup, `k.k0 = +i.column` over the store's non-NULL values copied to a
    /// column without affinity or collation, finds no record, and is left out. Yes only when
    /// every non-NULL value on both sides is TEXT, which that lookup compares byte for byte
    /// (BINARY: the key table's column, on the left, names no collation); and when no archive
    /// text is among the store's, as a Bloom filter of the store's texts' hashes says (no false
    /// "no": equal bytes, equal hashes), the few it flags looked up in SQL (`IN`, with the
    /// column's own collation, which takes no two equal texts for different ones). A number or
    /// a BLOB on either side answers no, and the lookup runs as it always did.
    ///
    /// Asked first of the archive's first cloudIDs: where the store holds one of them (a
    /// store's own archive) the answer is no without the pass over the store's table.
    ///
    /// Also returns, where the pass over the store's cloudIDs ran, whether every one of them is
    /// an identity (`CloudIDPass`, read in the same pass): the settling asks that again where
    /// records were inserted since.
    static func noCloudIDIsInBoth(
        column: String, of table: String, storeRows: String, archiveRows: String, storeCount: Int, db: Database
    ) throws -> (noneInBoth: Bool, storeCloudIDsAreIdentities: Bool?) {
        let archive = "SELECT i.\(column) FROM incoming.\(table) i WHERE \(archiveRows) AND i.\(column) IS NOT NULL"
        func storeHoldsAny(of values: [StoredValue]) throws -> Bool {
            guard !values.isEmpty else { return false }
            let list = Array(repeating: "?", count: values.count).joined(separator: ", ")
            return try !ExactSQL.fetchAll(
                db, sql: "SELECT 1 FROM main.\(table) s WHERE \(storeRows) AND s.\(column) IN (\(list)) LIMIT 1", values
            ).isEmpty
        }
        // A guess first, of the archive's first cloudIDs against the store's first records only
        // (a store's own archive comes in the store's order): a wrong guess costs time, never
        // an answer, which is the passes' below.
        let first = try ExactSQL.fetchAll(db, sql: archive + " LIMIT 64", []).map { $0[0] }
        let list = Array(repeating: "?", count: first.count).joined(separator: ", ")
        let guessed =
            try !first.isEmpty
            && !ExactSQL.fetchAll(
                db,
                sql:
                    "SELECT 1 FROM (SELECT s.\(column) AS c FROM main.\(table) s WHERE \(storeRows) LIMIT 4096) WHERE c IN (\(list)) LIMIT 1",
                first
            ).isEmpty
        if guessed { return (false, nil) }
        var store = try CloudIDPass(
            column: column, of: table, in: "main", alias: "s", rows: storeRows, expectedCount: storeCount, keepingTexts: true, db: db)
        guard store.onlyText else { return (false, store.allIdentities) }
        var onlyText = true
        var suspects = SuspectHashes()
        try ExactSQL.forEachRow(db, sql: archive) { row in
            guard onlyText else { return }
            guard let hash = row.withText(0, { Self.hash($0) }) else {
                onlyText = false
                return
            }
            guard store.texts.contains(hash) else { return }
            if !suspects.add(hash, value: { row[0] }) { onlyText = false }
        }
        // The store's suspects and the archive's, each in SQL where both are few, else in one
        // pass over the store's column (`SuspectHashes.settle`).
        // Moved out of `store`, the filter dropped: held through the settling's pass, they were
        // 4 MiB and a copy of the suspects at the merge's peak memory (`SuspectHashes.release`).
        var storeSuspects = SuspectHashes.release(&store.suspects, filter: &store.texts, keeping: store.allIdentities)
        if !onlyText { suspects = SuspectHashes() }
        let (storeColumn, storeTable) = ("s.\(column)", "FROM main.\(table) s WHERE \(storeRows)")
        if storeSuspects.areFew && suspects.areFew {
            return (
                try onlyText && !storeHoldsAny(of: suspects.values),
                try store.allIdentities && !storeSuspects.anyRepeated(column: storeColumn, rows: storeTable, db: db)
            )
        }
        let settled = try SuspectHashes.settle(repeats: &storeSuspects, anyOf: &suspects, column: storeColumn, rows: storeTable, db: db)
        return (onlyText && !settled.any, store.allIdentities && !settled.repeats)
    }

    /// A text's hash for the merge's filters: equal bytes, equal hashes, the same in every run
    /// (both sides of a filter are hashed here, in one process). Eight bytes a step, each word
    /// mixed (`StableHasher`), the length first and the last bytes as one word: FNV-1a's step a
    /// byte over each of a second device's 200,000 cloudIDs was a fifth of `noCloudIDIsInBoth`.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = StableHasher(seed: UInt64(bytes.count))
        var offset = 0
        while offset + 8 <= bytes.count {
            hasher.combine(word: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            offset += 8
        }
        var last: UInt64 = 0
        while offset < bytes.count {
            last = last << 8 | UInt64(bytes[offset])
            offset += 1
        }
        hasher.combine(word: last)
        return hasher.value
    }

    /// Equal records are paired one to one (the n-th of a kind in the archive with the n-th in
    /// the store, by key), never two of the archive with one of the store's; a store record
    /// another key matched is not matched again. A to-one that names no record of its side is
    /// compared as such, so a record with a dangling reference is still found in its own store.
    private mutating func matchByContent(_ entity: MergeLayout.EntityPlan, by key: MergeLayout.IdentityKey) throws {
        // Only records no other key could identify (each has a NULL part, after translation, or
        // a cloudID that names no one record) are looked for by content: one whose key is whole
        // and found nothing is new.
        let incomplete = entity.keys.filter { $0.kind != .content }.map { other -> String in
            var parts = other.fields.map { "\(incomingValue($0)) IS NULL" }
            if other.kind == .cloudID, let cloud = entity.cloudIDColumn {
                parts.append("NOT \(DeterministicID.wellFormedSQL("i.\(cloud)"))")
                parts.append(
                    "i.\(cloud) IN (SELECT x.\(cloud) FROM incoming.\(entity.table) x WHERE \(entity.rows("x")) GROUP BY x.\(cloud) HAVING count(*) > 1)"
                )
            }
            return " AND (" + parts.joined(separator: " OR ") + ")"
        }.joined()
        let candidates = "\(entity.rows("i")) AND \(unmatched(entity.table))\(incomplete)"
        let remaining = try Int.fetchOne(db, sql: "SELECT count(*) FROM incoming.\(entity.table) i WHERE \(candidates)") ?? 0
        guard remaining > 0 else { return }
        let names = key.fields.indices.map { "k\($0)" }
        func dangling(_ side: String, _ alias: String, _ column: String, _ reference: String) -> String {
            "CASE WHEN \(alias).\(column) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(side).\(reference) d WHERE d.\(keyColumn) = \(alias).\(column)) THEN 'dangling ' || \(alias).\(column) END"
        }
        let storeValues = key.fields.map { field in
            field.reference.map { "coalesce(\(dangling("main", "s", field.column, $0)), s.\(field.column))" } ?? "s.\(field.column)"
        }
        let incomingValues = key.fields.map { field in
            field.reference.map { "coalesce(\(translated("i", field.column, to: $0)), \(dangling("incoming", "i", field.column, $0)))" }
                ?? "+i.\(field.column)"
        }
        func selected(_ values: [String]) -> String { zip(values, names).map { "\($0) AS \($1)" }.joined(separator: ", ") }
        let partition = names.isEmpty ? "" : "PARTITION BY \(names.joined(separator: ", "))"
        try db.execute(sql: "DROP TABLE IF EXISTS temp.questbak_key")
        // Columns without a declared type: no affinity, so values keep their storage class.
        try db.execute(sql: "CREATE TEMP TABLE questbak_key (pk INTEGER, n INTEGER\(names.map { ", " + $0 }.joined()))")
        try db.execute(
            sql: """
                INSERT INTO temp.questbak_key
                SELECT pk, row_number() OVER (\(partition) ORDER BY pk)\(names.map { ", " + $0 }.joined()) FROM (
                    SELECT s.\(keyColumn) AS pk\(names.isEmpty ? "" : ", " + selected(storeValues)) FROM main.\(entity.table) s
                    WHERE \(entity.rows("s")) AND s.\(keyColumn) NOT IN (SELECT store FROM \(Self.mapName(entity.table))))
                """)
        try db.execute(sql: "CREATE INDEX temp.questbak_key_index ON questbak_key (\((["n"] + names).joined(separator: ", ")))")
        try db.execute(
            sql: """
                INSERT INTO \(Self.mapName(entity.table)) (incoming, store, how)
                SELECT x.ipk, k.pk, \(MapOrigin(key.kind).rawValue) FROM (
                    SELECT ipk, row_number() OVER (\(partition) ORDER BY ipk) AS n\(names.map { ", " + $0 }.joined()) FROM (
                        SELECT i.\(keyColumn) AS ipk\(names.isEmpty ? "" : ", " + selected(incomingValues)) FROM incoming.\(entity.table) i
                        WHERE \(candidates))
                ) x JOIN temp.questbak_key k ON k.n = x.n\(names.map { " AND k.\($0) IS x.\($0)" }.joined())
                """)
        if db.changesCount > 0 { counts[entity.name]?.matchedBy[key.kind.rawValue, default: 0] += db.changesCount }
        try db.execute(sql: "DROP TABLE temp.questbak_key")
    }

    /// Records only in the archive get keys above every key the store's table has used (its
    /// rows, its `Z_MAX`, and keys already given in this merge), in the archive's order.
    private mutating func assignNewKeys(_ entity: MergeLayout.EntityPlan) throws {
        let needed = Int64(unmatchedCount(entity))
        guard needed > 0 else { return }
        let names = layout.entities.filter { $0.table == entity.table }.map(\.name)
        let placeholders = names.map { _ in "?" }.joined(separator: ", ")
        let base =
            try Int64.fetchOne(
                db,
                sql: """
                    SELECT max(coalesce((SELECT max(\(keyColumn)) FROM main.\(entity.table)), 0),
                               coalesce((SELECT max(store) FROM \(Self.mapName(entity.table))), 0),
                               coalesce((SELECT max(\(maxColumn)) FROM main.\(primaryKeyTable) WHERE \(nameColumn) IN (\(placeholders))), 0))
                    """, arguments: StatementArguments(names)) ?? 0
        guard base <= Int64.max - needed else {
            throw ImportError.notMergeable(
                store: storePath,
                reason:
                    "its table \(entity.table) has used keys up to \(base): there is no room for the archive's \(needed) new \(entity.name) records"
            )
        }
        try db.execute(
            sql: """
                INSERT INTO \(Self.mapName(entity.table)) (incoming, store, how)
                SELECT i.\(keyColumn), ? + row_number() OVER (ORDER BY i.\(keyColumn)), \(MapOrigin.new.rawValue)
                FROM incoming.\(entity.table) i WHERE \(entity.rows("i")) AND \(unmatched(entity.table))
                """, arguments: [base])
        // The count kept in Swift is what this adds, or a record would be left out unsaid.
        guard db.changesCount == needed else {
            throw ImportError.verificationFailed(
                store: storePath, entity: entity.name, expected: "\(needed) records new to the store", found: "\(db.changesCount)")
        }
        counts[entity.name]?.inserted = db.changesCount
    }

    // MARK: 2. Records

    private func cloudID(_ value: StoredValue) -> String? { value.validText }

    /// A reference to a record the archive does not have cannot be translated: it is left out
    /// (the column stays as the store has it, or NULL in a new record) and reported.
    private func reportDangling(_ entity: MergeLayout.EntityPlan) throws {
        let namingRecords = try referenceChecks?.archiveNamesOnlyRecords.value() ?? []
        for field in entity.fields {
            // Where every archive value of the field names a record, none is left to list
            // (`ReferenceChecks`): a second device's merge read its map and archive for nothing.
            guard let reference = field.reference, !namingRecords.contains("\(entity.name).\(field.name)") else { continue }
            try ExactSQL.forEachRow(
                db,
                sql: """
                    SELECT m.store, i.\(field.column) FROM \(Self.mapName(entity.table)) m JOIN incoming.\(entity.table) i ON i.\(keyColumn) = m.incoming
                    WHERE \(entity.rows("i")) AND i.\(field.column) IS NOT NULL
                      AND NOT EXISTS (SELECT 1 FROM \(Self.mapName(reference)) d WHERE d.incoming = i.\(field.column))
                    ORDER BY m.store
                    """
            ) { row in
                try log.record(
                    RepairEntry(
                        rule: .dangling, kind: .merge, entity: entity.name, primaryKey: row.integer(0) ?? 0, cloudID: nil,
                        field: field.name, old: .value(row[1].reportable), new: .value(.null)))
            }
        }
    }

    private func insertNew(_ entity: MergeLayout.EntityPlan) throws {
        // The map's `new` rows of the entity's records are the ones `assignNewKeys` added, which
        // it counted in `inserted` (and checked): with none, both passes below find nothing.
        guard (counts[entity.name]?.inserted ?? 0) > 0 else { return }
        let references = layout.references(in: entity.table)
        let columns = try columns(entity.table, in: "main").filter { !CoreDataSQL.rowColumns.contains($0.uppercased()) }
        let values = columns.map { column in references[column].map { translated("i", column, to: $0) } ?? "i.\(column)" }
        try db.execute(
            sql: """
                INSERT INTO main.\(entity.table) (\(keyColumn), \(entityColumn), \(optColumn)\(columns.map { ", " + $0 }.joined()))
                SELECT m.store, i.\(entityColumn), i.\(optColumn)\(values.map { ", " + $0 }.joined())
                FROM \(Self.mapName(entity.table)) m JOIN incoming.\(entity.table) i ON i.\(keyColumn) = m.incoming
                WHERE m.how = \(MapOrigin.new.rawValue) AND \(entity.rows("i")) ORDER BY m.store
                """)
        let cloud = entity.cloudIDColumn.map { "i.\($0)" } ?? "NULL"
        try ExactSQL.forEachRow(
            db,
            sql: """
                SELECT m.store, m.incoming, \(cloud) FROM \(Self.mapName(entity.table)) m JOIN incoming.\(entity.table) i ON i.\(keyColumn) = m.incoming
                WHERE m.how = \(MapOrigin.new.rawValue) AND \(entity.rows("i")) ORDER BY m.store
                """
        ) { row in
            try log.record(
                RepairEntry(
                    rule: .insert, kind: .merge, entity: entity.name, primaryKey: row.integer(0) ?? 0, cloudID: cloudID(row[2]),
                    field: nil, old: nil, new: .value(.integer(row.integer(1) ?? 0))))
        }
    }

    /// Records in both: those that differ in any field are gathered in a scratch table first
    /// (one pass over the map), then settled one by one, so memory holds one record, never the
    /// whole table.
    private mutating func mergeMatched(_ entity: MergeLayout.EntityPlan) throws {
        let fields = entity.fields
        guard !fields.isEmpty else { return }
        let newer = preference == .newer ? newerColumns[entity.name] : nil
        // A reference's translation (`incomingValue`) is joined once per record, not looked up
        // in the comparison and again for the value: a table's map is keyed by the record's key,
        // so the join finds one row or none (NULL), as the lookup did.
        var translations = ""
        let incoming = fields.enumerated().map { index, field in
            guard let reference = field.reference else { return "i.\(field.column)" }
            translations +=
                " LEFT JOIN \(Self.mapName(reference)) r\(index) ON r\(index).incoming = i.\(field.column)"
            return "r\(index).store"
        }
        let selected =
            ["m.store", "m.incoming", newer.map { "s.\($0)" } ?? "NULL", newer.map { "i.\($0)" } ?? "NULL"]
            + fields.map { "s.\($0.column)" } + incoming
        let differs = zip(fields, incoming).map { "s.\($0.column) IS NOT +\($1)" }.joined(separator: " OR ")
        let differing = """
            FROM \(Self.mapName(entity.table)) m JOIN incoming.\(entity.table) i ON i.\(keyColumn) = m.incoming
            JOIN main.\(entity.table) s ON s.\(keyColumn) = m.store\(translations)
            WHERE m.how <> \(MapOrigin.new.rawValue) AND \(entity.rows("i")) AND (\(differs))
            """
        // Where every store record in both was matched once, the store keys rising with the
        // archive's (`storeKeysRise`), the differing records are read from the tables
        // themselves, in the map's order, and the changes the settling makes are written after
        // the last is read (`questbak_changes`). Else they are copied to a scratch table first,
        // because the settling changes the store's table they are read from, and a record
        // matched twice is settled the second time as the first left it.
        usedCloudIDs = nil
        if usesShortcuts {
            // No record in both differs (a store's own archive): nothing to settle, nothing to ask.
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 \(differing))") == true else { return }
        }
        let readsInPlace = try usesShortcuts && Self.storeKeysRise(table: entity.table, db: db)
        if readsInPlace {
            try db.execute(sql: "DROP TABLE IF EXISTS temp.questbak_changes")
            // A settled record's key, the columns it changed (their names, a space between), and
            // their values, in columns without affinity: each value as bound.
            try db.execute(
                sql: "CREATE TEMP TABLE questbak_changes (k INTEGER, c TEXT\(fields.indices.map { ", v\($0)" }.joined()))")
        } else {
            // Columns without a declared type: no affinity, so values keep their storage class.
            try db.execute(sql: "DROP TABLE IF EXISTS temp.questbak_differing")
            try db.execute(
                sql: "CREATE TEMP TABLE questbak_differing (\(selected.indices.map { "c\($0)" }.joined(separator: ", ")))")
            try db.execute(
                sql: "INSERT INTO temp.questbak_differing SELECT \(selected.joined(separator: ", ")) \(differing) ORDER BY m.incoming")
            // No record in both differs (a store's own archive): nothing to settle, nothing to ask.
            guard db.changesCount > 0 else { return try db.execute(sql: "DROP TABLE temp.questbak_differing") }
        }
        // The cloudIDs that name no one record (shared defaults) of each side, as before the merge
        // fills any; few, whatever the size of the tables. The archive's are looked for only
        // when a record first asks (its table is not changed by the merge, so they are the
        // same then): on a second device, whose records all have their own, none does, and the
        // pass over the archive's table cost a merge a hundredth of its time.
        var sharedInStore = Set<StoredValue>()
        var sharedInArchive: Set<String>?
        let (db, table, rows) = (self.db, entity.table, entity.rows("r"))
        func sharedCloudIDs(_ schema: String, _ body: (StoredValue) -> Void) throws {
            guard let cloud = entity.cloudIDColumn else { return }
            try ExactSQL.forEachRow(
                db,
                sql:
                    "SELECT r.\(cloud) FROM \(schema).\(table) r WHERE \(rows) AND r.\(cloud) IS NOT NULL GROUP BY r.\(cloud) HAVING count(*) > 1",
                []
            ) { body($0[0]) }
        }
        // Where one pass shows every store cloudID an identity (well formed, each once), none is
        // shared and none is no identity: the `GROUP BY` here and the reading of every differing
        // record's value below (`needed`) would find nothing.
        // The matching's pass over the store's cloudIDs answered this already where no record of
        // the entity was inserted since: nothing else writes the entity's rows before its own
        // settling (another entity's inserts and changes are rows of its own `Z_ENT`, or of a
        // table this one does not share), so the column and the count sizing the filter are the same.
        let storeCloudIDsAreIdentities =
            try entity.cloudIDColumn.map {
                if counts[entity.name]?.inserted == 0, let shown = storeCloudIDsShownIdentities[entity.name] { return shown }
                return try Self.cloudIDsAreIdentities(
                    column: $0, of: table, in: "main", rows: entity.rows("i"),
                    expectedCount: counts[entity.name].map { $0.inStore + $0.inserted } ?? 0, db: db)
            } ?? false
        if !storeCloudIDsAreIdentities { try sharedCloudIDs("main") { sharedInStore.insert($0) } }
        // The store's as text, as the settling compares them; the store's values as stored (text
        // or not) for `needed` below.
        let sharedStoreText = Set(sharedInStore.compactMap(\.validText))
        func sharedArchiveText() throws -> Set<String> {
            if let sharedInArchive { return sharedInArchive }
            var found = Set<String>()
            try sharedCloudIDs("incoming") { value in value.validText.map { _ = found.insert($0) } }
            sharedInArchive = found
            return found
        }
        // The store's cloudIDs, indexed, for the defaults the archive's copies may fill: made
        // before the rows are read (a table cannot be made while a statement reads another),
        // and only when a record in both has a store cloudID that is no identity (not well
        // formed, or shared). That is asked of each record's value here, in Swift, as the SQL
        // it replaces asked it (`value IS NOT NULL AND (NOT wellFormedSQL(value) OR value IN
        // (the store's shared values)))`): its GLOB over every record cost a merge into a second
        // device 3% of its time.
        if let cloud = entity.cloudIDColumn, !storeCloudIDsAreIdentities, let index = fields.firstIndex(where: { $0.column == cloud }) {
            var needed = false
            let storeCloudIDs =
                readsInPlace
                ? "SELECT s.\(cloud) \(differing) AND s.\(cloud) IS NOT NULL"
                : "SELECT c\(4 + index) FROM temp.questbak_differing WHERE c\(4 + index) IS NOT NULL"
            try ExactSQL.forEachRow(db, sql: storeCloudIDs) { row in
                needed = try needed || Self.isNoIdentity(row[0], shared: sharedInStore, in: db)
            }
            if needed {
                try db.execute(sql: "DROP TABLE IF EXISTS temp.questbak_used")
                try db.execute(sql: "CREATE TEMP TABLE questbak_used (id PRIMARY KEY) WITHOUT ROWID")
                try db.execute(
                    sql: "INSERT OR IGNORE INTO temp.questbak_used SELECT \(cloud) FROM main.\(entity.table) WHERE \(cloud) IS NOT NULL")
                usedCloudIDs = entity.table
            }
        }
        // Rows come by store key: several archive records one store record matched (by cloudID
        // and by natural key) follow each other, and each after the first is settled against the
        // record as the previous one left it, not as it was before the merge.
        var previous: (key: Int64, changed: Bool)?
        // The merge as it settles (nothing the settling asks of it changes in the loop below),
        // for the calls the loop makes: called on `self`, which the loop also changes (`counts`),
        // every record's call copied the whole merge (a retain of each of its references) and
        // freed the copy.
        let merge = self
        let settled = SettledFields(entity)
        let current =
            "SELECT \(newer.map { "s.\($0)" } ?? "NULL")\(fields.map { ", s.\($0.column)" }.joined()) FROM main.\(entity.table) s WHERE s.\(keyColumn) = ?"
        // They were written in the map's order, by archive key, which SQLite reads without a
        // sort (sorting every differing record as it was written took a tenth of a merge into
        // a second device). Where the store keys never fall as the archive keys rise (a store's
        // own archive, a second device made in the same order), that is the order by store key;
        // else they are sorted here.
        let toSettle: (sql: String, arguments: [StoredValue])
        if readsInPlace {
            toSettle = ("SELECT \(selected.joined(separator: ", ")) \(differing) ORDER BY m.incoming", [])
        } else {
            let storeKeysFall =
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM (SELECT 1 FROM temp.questbak_differing a JOIN temp.questbak_differing b ON b.rowid = a.rowid + 1
                                              WHERE b.c0 < a.c0 LIMIT 1)
                        """) != 0
            toSettle = ("SELECT * FROM temp.questbak_differing" + (storeKeysFall ? " ORDER BY c0, c1" : " ORDER BY rowid"), [])
        }
        // Kept from record to record, each record's values read into them: two arrays made and
        // freed per record took a merge of 1M estimations a quarter of a second more.
        var store = [StoredValue](repeating: .null, count: fields.count)
        var archive = store
        try ExactSQL.forEachRow(db, sql: toSettle.sql, toSettle.arguments) { row in
            guard case .integer(let storeKey) = row[0] else { return }
            var storeDate = row[2]
            for index in fields.indices {
                store[index] = row[4 + index]
                archive[index] = row[4 + fields.count + index]
            }
            if previous?.key == storeKey {
                // Read in place, the record would be read as it was before the change the
                // settling has not yet written: `storeKeysRise` said no record comes twice.
                guard !readsInPlace else {
                    throw ImportError.verificationFailed(
                        store: storePath, entity: entity.name, expected: "each store record in both once", found: "_pk \(storeKey) twice")
                }
                if let now = try merge.fetchFirst(current, [.integer(storeKey)]) {
                    storeDate = now[0]
                    store = Array(now.dropFirst())
                }
            }
            // A dated copy is newer than an undated one: else the archive's date fills the
            // store's, and the store's older values pass for the newer ones at every later merge.
            let archiveIsNewer =
                newer != nil && (Self.compare(row[3], storeDate).map { $0 > 0 } ?? (storeDate == .null && row[3] != .null))
            let changed = try merge.settle(
                entity, settled, storeKey: storeKey, store: store, archive: archive, archiveIsNewer: archiveIsNewer,
                shared: (store: sharedStoreText, storeAreIdentities: storeCloudIDsAreIdentities, archive: sharedArchiveText),
                defersChanges: readsInPlace)
            let counted = previous?.key == storeKey && previous?.changed == true
            if changed && !counted { counts[entity.name]?.changed += 1 }
            previous = (storeKey, changed || counted)
        }
        if readsInPlace {
            try applyDeferredChanges(entity)
        } else {
            try db.execute(sql: "DROP TABLE temp.questbak_differing")
        }
    }

    /// Whether the store keys the map gives `table`'s records in both rise strictly with the
    /// archive keys, in the map's order: then every store record in both was matched once (a
    /// record matched twice would repeat its key), and the order by archive key is the order by
    /// store key. One read of the map's integers, in the order of its primary key.
    static func storeKeysRise(table: String, db: Database) throws -> Bool {
        var last: Int64?
        var rises = true
        try ExactSQL.forEachRow(
            try db.cachedStatement(sql: "SELECT store FROM \(mapName(table)) WHERE how <> \(MapOrigin.new.rawValue) ORDER BY incoming")
        ) { row in
            guard rises else { return }
            guard let key = row.integer(0), last.map({ key > $0 }) ?? true else {
                rises = false
                return
            }
            last = key
        }
        return rises
    }

    /// The changes the settling noted while it read the records in place, written now, record
    /// by record in the order they were settled, by the same statement it would have run (each
    /// record settled once: `storeKeysRise`).
    private func applyDeferredChanges(_ entity: MergeLayout.EntityPlan) throws {
        try ExactSQL.forEachRow(db, sql: "SELECT * FROM temp.questbak_changes ORDER BY rowid") { row in
            guard let key = row.integer(0), let columns = row[1].validText?.split(separator: " ") else { return }
            try update(entity, storeKey: key, columns.enumerated().map { (String($1), row[2 + $0]) })
        }
        try db.execute(sql: "DROP TABLE temp.questbak_changes")
    }

    /// Writes one settled record's changes. Core Data counts a record's versions in Z_OPT: a
    /// changed record is a new version. A record's changed columns are one of few sets: each
    /// set's statement is prepared once.
    private func update(_ entity: MergeLayout.EntityPlan, storeKey: Int64, _ changes: [(column: String, value: StoredValue)]) throws {
        try ExactSQL.execute(
            try db.cachedStatement(
                sql:
                    "UPDATE main.\(entity.table) SET \(changes.map { "\($0.column) = ?, " }.joined())\(optColumn) = coalesce(\(optColumn), 0) + 1 WHERE \(keyColumn) = ?"
            ),
            changes.map(\.value) + [.integer(storeKey)])
    }

    /// What `settle` asks of an entity's fields, found once per entity: asked of each field of
    /// every record in both, the cloudID's place (a search of the fields by column), whether a
    /// field is the cloudID (a comparison of texts) and its rule (a lookup by name) were a
    /// million questions for a second device's 100,000 estimations.
    struct SettledFields {
        /// The first field whose column is the entity's cloudID column: the record's cloudID.
        let cloudID: Int?
        /// By field: whether its column is the entity's cloudID column.
        let isCloudID: [Bool]
        /// By field: the app profile's rule for it (`EntityPlan.rules`), if any.
        let rules: [MergeRule?]

        init(_ entity: MergeLayout.EntityPlan) {
            cloudID = entity.cloudIDColumn.flatMap { column in entity.fields.firstIndex { $0.column == column } }
            isCloudID = entity.fields.map { $0.column == entity.cloudIDColumn }
            rules = entity.fields.map { entity.rules[$0.name] }
        }
    }

    /// Decides every differing field of one record in both, applies the changes and reports them.
    private func settle(
        _ entity: MergeLayout.EntityPlan, _ settled: SettledFields, storeKey: Int64, store: [StoredValue], archive: [StoredValue],
        archiveIsNewer: Bool, shared: (store: Set<String>, storeAreIdentities: Bool, archive: () throws -> Set<String>),
        defersChanges: Bool
    ) throws -> Bool {
        // Made once, for the record's first entry: the same text for each of its entries.
        var storeCloudID: String??
        func recordCloudID() -> String? {
            if let storeCloudID { return storeCloudID }
            let made = settled.cloudID.flatMap { cloudID(store[$0]) }
            storeCloudID = .some(made)
            return made
        }
        var changes: [(column: String, value: StoredValue)] = []
        for index in store.indices {
            let (mine, theirs) = (store[index], archive[index])
            if Self.same(mine, theirs) || theirs == .null { continue }
            // The field is read only for a value that differs: half of a second device's. Its
            // parts are read in place: a copy of the `Field` (four texts retained, then released)
            // per value that differs was a seventh of `settle` at 1M estimations.
            func entry(_ rule: RepairEntry.Rule, old: StoredValue, new: StoredValue) -> RepairEntry {
                let kind = entity.fields[index].kind
                return RepairEntry(
                    rule: rule, kind: .merge, entity: entity.name, primaryKey: storeKey, cloudID: recordCloudID(),
                    field: entity.fields[index].name, old: .value(reportable(old, kind)), new: .value(reportable(new, kind)))
            }
            if try mine == .null || names(nothing: mine, in: entity.fields[index].reference) {
                // What the store lacks, the archive fills, whatever the preference: a reference
                // to no record is lacking too.
                try log.record(entry(.fill, old: mine, new: theirs))
                changes.append((entity.fields[index].column, theirs))
                continue
            }
            if settled.isCloudID[index] {
                func isIdentity(_ value: StoredValue, sharedOnItsSide: Set<String>) -> Bool {
                    value.validText.map { DeterministicID.isWellFormed($0) && !sharedOnItsSide.contains($0) } ?? false
                }
                // Where every store cloudID was shown an identity (`cloudIDsAreIdentities`), the
                // store's is one: as the store has it, or an archive identity a record settled
                // before filled (a text that passed the test below), and none is shared.
                if !shared.storeAreIdentities, !isIdentity(mine, sharedOnItsSide: shared.store),
                    isIdentity(theirs, sharedOnItsSide: try shared.archive()),
                    try !isUsed(theirs, entity)
                {
                    try ExactSQL.execute(try db.cachedStatement(sql: "INSERT OR IGNORE INTO temp.questbak_used (id) VALUES (?)"), [theirs])
                    // A default (shared, or not a UUID) is no identity: the archive's copy's is.
                    try log.record(entry(.fill, old: mine, new: theirs))
                    changes.append((entity.fields[index].column, theirs))
                    continue
                }
                // The store's record keeps its cloudID; the archive's copy's is for the app to retire.
                if !archiveCloudIDsAreMade { try log.record(entry(.supersede, old: theirs, new: mine)) }
                continue
            }
            let archiveWins: Bool
            if let rule = settled.rules[index], let order = Self.compare(theirs, mine) {
                archiveWins = rule == .maximum ? order > 0 : order < 0
            } else {
                switch preference {
                case .store: archiveWins = false
                case .archive: archiveWins = true
                case .newer: archiveWins = archiveIsNewer
                }
            }
            // `old` is the value that lost, `new` the one the merged store holds.
            try log.record(entry(.conflict, old: archiveWins ? mine : theirs, new: archiveWins ? theirs : mine))
            if archiveWins { changes.append((entity.fields[index].column, theirs)) }
        }
        guard !changes.isEmpty else { return false }
        guard defersChanges else {
            try update(entity, storeKey: storeKey, changes)
            return true
        }
        // Noted for `applyDeferredChanges`, in a column without affinity: each value as bound.
        // One row per record: one row per changed value took a merge that rewrites every record
        // (`--prefer archive`) four rows a record.
        let note = try db.cachedStatement(
            sql:
                "INSERT INTO temp.questbak_changes (k, c\(changes.indices.map { ", v\($0)" }.joined())) VALUES (?, ?\(String(repeating: ", ?", count: changes.count)))"
        )
        try ExactSQL.execute(
            note, [.integer(storeKey), .text(Data(changes.map(\.column).joined(separator: " ").utf8))] + changes.map(\.value))
        return true
    }

    /// Whether a store's cloudID (not NULL) is none that `DeterministicID.wellFormedSQL` accepts,
    /// or is one `shared` (the values of the store's column that more than one record has, as
    /// `GROUP BY` gave them) holds, as SQL compares a column without affinity with them. A
    /// number is never well formed (no number is 36 characters with four hyphens); TEXT is
    /// when its 36 bytes are a UUID's digits and hyphens (GLOB reads it to a NUL, and any other
    /// byte matches no digit); and a value equals a shared one only of its own storage class,
    /// byte for byte. Whether GLOB matches a BLOB at all depends on how SQLite was built
    /// (`SQLITE_LIKE_DOESNT_MATCH_BLOBS`), so for a BLOB, rare in a cloudID column, SQLite is asked.
    static func isNoIdentity(_ value: StoredValue, shared: Set<StoredValue>, in db: Database) throws -> Bool {
        switch value {
        case .null: return false
        case .integer, .real: return true
        case .text(let bytes):
            // 36 bytes that decode with a replacement are not a UUID's in either test.
            return !DeterministicID.isWellFormed(String(decoding: bytes, as: UTF8.self)) || shared.contains(value)
        case .blob:
            var wellFormed = false
            try ExactSQL.forEachRow(
                try db.cachedStatement(sql: "SELECT \(DeterministicID.wellFormedSQL("v")) FROM (SELECT ? AS v)"), [value]
            ) { wellFormed = $0.integer(0) == 1 }
            return !wellFormed || shared.contains(value)
        }
    }

    /// `StoredValue.sameKey` of one value each, as the duplicate rule compares a key's parts (an
    /// integer equals the real of the same number): without the two one-element arrays that
    /// call makes, once per field of every record in both.
    static func same(_ lhs: StoredValue, _ rhs: StoredValue) -> Bool {
        switch (lhs, rhs) {
        case (.integer(let a), .real(let b)), (.real(let b), .integer(let a)): return Double(exactly: a) == b
        default: return lhs == rhs
        }
    }

    /// The first row of a query run once per record, its statement prepared once (a statement
    /// made per record cost more than the query itself).
    private func fetchFirst(_ sql: String, _ arguments: [StoredValue]) throws -> [StoredValue]? {
        var first: [StoredValue]?
        try ExactSQL.forEachRow(try db.cachedStatement(sql: sql), arguments) { row in
            if first == nil { first = (0..<row.count).map { row[$0] } }
        }
        return first
    }

    /// Whether `value`, in the store's column `field`, names a record the store does not have.
    /// `reference`: the field's (`Field.reference`), nil for a field that names no record.
    private func names(nothing value: StoredValue, in reference: String?) throws -> Bool {
        guard let reference, value != .null else { return false }
        return try fetchFirst("SELECT 1 FROM main.\(reference) WHERE \(keyColumn) = ? LIMIT 1", [value]) == nil
    }

    /// Whether a record of the store's table already holds the cloudID `value` (looked up in
    /// the temporary index of the table's cloudIDs `mergeMatched` made).
    private func isUsed(_ value: StoredValue, _ entity: MergeLayout.EntityPlan) throws -> Bool {
        guard usedCloudIDs == entity.table else { return true }
        return try fetchFirst("SELECT 1 FROM temp.questbak_used WHERE id = ? LIMIT 1", [value]) != nil
    }

    /// `kind`: the field's (`Field.kind`), nil for a reference.
    private func reportable(_ stored: StoredValue, _ kind: AttributeKind?) -> Value {
        guard let kind else { return stored.reportable }
        return (try? ValueCoding.decode(stored, as: kind)) ?? stored.reportable
    }

    /// The order of two stored values as SQLite sorts them (numbers by value, then text, then
    /// BLOBs, byte for byte); nil when either is NULL.
    static func compare(_ lhs: StoredValue, _ rhs: StoredValue) -> Int? {
        func rank(_ value: StoredValue) -> Int {
            switch value {
            case .null: return 0
            case .integer, .real: return 1
            case .text: return 2
            case .blob: return 3
            }
        }
        func number(_ value: StoredValue) -> Double? {
            switch value {
            case .integer(let number): return Double(number)
            case .real(let number): return number
            default: return nil
            }
        }
        guard lhs != .null, rhs != .null else { return nil }
        if rank(lhs) != rank(rhs) { return rank(lhs) < rank(rhs) ? -1 : 1 }
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): return a == b ? 0 : (a < b ? -1 : 1)
        case (.text(let a), .text(let b)), (.blob(let a), .blob(let b)):
            return a.elementsEqual(b) ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
        default:
            guard let a = number(lhs), let b = number(rhs) else { return nil }
            return a == b ? 0 : (a < b ? -1 : 1)
        }
    }

    // MARK: 3. Links and bookkeeping

    private mutating func addLinks(_ join: MergeLayout.JoinTable) throws {
        let others = try columns(join.name, in: "main").filter {
            ![join.sourceColumn.uppercased(), join.destinationColumn.uppercased()].contains($0.uppercased())
        }
        let from = """
            FROM incoming.\(join.name) j
            JOIN \(Self.mapName(join.sourceTable)) ms ON ms.incoming = j.\(join.sourceColumn)
            JOIN \(Self.mapName(join.destinationTable)) md ON md.incoming = j.\(join.destinationColumn)
            WHERE NOT EXISTS (SELECT 1 FROM main.\(join.name) x
                              WHERE x.\(join.sourceColumn) = ms.store AND x.\(join.destinationColumn) = md.store)
            """
        try ExactSQL.forEachRow(db, sql: "SELECT ms.store, md.store \(from) ORDER BY 1, 2") { row in
            try log.record(
                RepairEntry(
                    rule: .link, kind: .merge, entity: join.entity, primaryKey: row.integer(0) ?? 0, cloudID: nil, field: join.relationship,
                    old: nil, new: .value(.integer(row.integer(1) ?? 0))))
        }
        try db.execute(
            sql: """
                INSERT OR IGNORE INTO main.\(join.name) (\(([join.sourceColumn, join.destinationColumn] + others).joined(separator: ", ")))
                SELECT ms.store, md.store\(others.map { ", j." + $0 }.joined()) \(from)
                """)
        let unlinked =
            try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM incoming.\(join.name) j
                    WHERE NOT EXISTS (SELECT 1 FROM \(Self.mapName(join.sourceTable)) ms WHERE ms.incoming = j.\(join.sourceColumn))
                       OR NOT EXISTS (SELECT 1 FROM \(Self.mapName(join.destinationTable)) md WHERE md.incoming = j.\(join.destinationColumn))
                    """) ?? 0
        if unlinked > 0 {
            notes.append("\(unlinked) link(s) of \(join.entity).\(join.relationship) in the archive name no record of it: not merged")
        }
    }

    /// Tables no entity owns (another tool's, a join table carried as a table) have rows whose
    /// meaning questbak does not know: they are not merged, and rows of the archive's that the
    /// store's table lacks are said, never dropped silently.
    private mutating func reportTablesNotMerged() throws {
        let known = Set((layout.tables + layout.joinTables.map(\.name)).map { $0.uppercased() })
        let tables = try String.fetchAll(
            db, sql: "SELECT name FROM incoming.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        )
        let storeTables = Set(try String.fetchAll(db, sql: "SELECT upper(name) FROM main.sqlite_master WHERE type = 'table'"))
        for table in tables where !known.contains(table.uppercased()) && !CoreDataSQL.isCoreDataTable(table) {
            let quoted = table.quotedSQLIdentifier
            let columns = try self.columns(table, in: "incoming")
            let sameColumns = try storeTables.contains(table.uppercased()) && Set(self.columns(table, in: "main")) == Set(columns)
            let list = columns.map(\.quotedSQLIdentifier).joined(separator: ", ")
            let missing =
                try Int.fetchOne(
                    db,
                    sql: sameColumns
                        ? "SELECT count(*) FROM (SELECT \(list) FROM incoming.\(quoted) EXCEPT SELECT \(list) FROM main.\(quoted))"
                        : "SELECT count(*) FROM incoming.\(quoted)") ?? 0
            if missing > 0 {
                notes.append(
                    "the archive's table \(UntrustedText.display(table)) has \(missing) row(s) the store's has not: not merged (no model says what its rows are; a restore of the archive alone keeps them)"
                )
            }
        }
    }

    /// Core Data hands out keys above `Z_MAX`: it must not fall below a key the merge used.
    private func raiseMaximumKey(_ entity: MergeLayout.EntityPlan) throws {
        guard entity.isRoot, let largest = try Int64.fetchOne(db, sql: "SELECT max(\(keyColumn)) FROM main.\(entity.table)"),
            let current = try Row.fetchOne(
                db, sql: "SELECT \(entityColumn), \(maxColumn) FROM main.\(primaryKeyTable) WHERE \(nameColumn) = ?",
                arguments: [entity.name])
        else { return }
        let floor: Int64 = current[maxColumn] ?? 0
        guard largest > floor else { return }
        try log.record(
            RepairEntry(
                rule: .maximumPrimaryKey, kind: .bookkeeping, entity: entity.name, primaryKey: largest, cloudID: nil, field: maxColumn,
                old: .value(.integer(floor)), new: .value(.integer(largest))))
        try db.execute(
            sql: "UPDATE main.\(primaryKeyTable) SET \(maxColumn) = ? WHERE \(nameColumn) = ?", arguments: [largest, entity.name])
    }
}
