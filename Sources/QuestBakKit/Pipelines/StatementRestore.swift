import CoreDataStore
import Crypto
import Foundation
import GRDB
import QuestBakArchive

/// The one restore, of every archive. An archive of any app's store (format version 3,
/// `source.schema` "model" or "generic"): the store's own statements make the same tables,
/// columns and indexes; the records go back into the columns they came from (through the store's
/// own model, or column by column); `Z_PRIMARYKEY` and the other carried tables row by row; the
/// metadata and model cache byte for byte. Persistent history and CloudKit mirroring start empty,
/// as Core Data rebuilds them. An archive of format 1 or 2 (TimeQuest's) comes through
/// `LegacyArchive`, which gives the statements, the model and the records of its profile's schema.
///
/// What was written is then proved by reading the closed store back: its statements are the ones
/// replayed, and every member encodes to the digest the manifest lists (or, after repairs, that
/// the records written encode to).
struct StatementRestore {
    let manifest: ArchiveManifest
    let archive: String
    let statements: [String]
    let isModel: Bool
    /// A format 1 or 2 archive: what its profile's schema says of it (nil for format 3).
    let legacy: LegacyArchive?
    /// What the statements make besides plain tables (virtual tables and their shadow tables),
    /// found by replaying them into a scratch database while the manifest is read.
    let replayed: StatementReplay

    /// The schema version of the store written (a format 1 or 2 archive may be restored as a later one).
    var schemaVersion: String { legacy?.schemaVersion ?? manifest.effectiveSchemaVersion }

    /// The entities the store has, each with a member an export of it writes: a format 1 or 2
    /// archive's target schema's, or the manifest's.
    var entityNames: [String] { legacy?.entityNames ?? manifest.entities.map(\.name) }

    /// Tables the archive carries row by row (a join table among them holds rows that link no
    /// record, so its links are not typed).
    var carriedTableNames: Set<String> { Set((manifest.tables ?? []).map(\.name)) }

    /// Statements that make tables and indexes, and those a migration makes after the rows (a
    /// trigger made before would fire on its inserts). A restore replays every statement in its
    /// order instead, with triggers turned off (StatementReplay).
    static let tablePrefixes = ["CREATE TABLE ", "CREATE INDEX ", "CREATE UNIQUE INDEX "]
    static let laterPrefixes = ["CREATE TRIGGER ", "CREATE VIEW "]

    /// A format 1 or 2 archive, through its profile's schema: the statements are the target
    /// schema's, made by questbak, not read from the archive.
    init(legacy: LegacyArchive, archive: String) throws {
        manifest = legacy.manifest
        self.archive = archive
        self.legacy = legacy
        statements = try legacy.statements(archive: archive)
        isModel = true
        replayed = try StatementReplay.check(statements)
    }

    init(manifest: ArchiveManifest, archive: String) throws {
        self.manifest = manifest
        self.archive = archive
        legacy = nil
        guard let statements = manifest.sql, !statements.isEmpty else {
            throw ArchiveError.notAQuestbakArchive(
                path: archive, reason: "a \(manifest.source.schema) archive must list the store's statements (sql)")
        }
        guard manifest.source.schema == ArchiveManifest.Source.modelSchema || manifest.source.schema == ArchiveManifest.Source.genericSchema
        else {
            throw ImportError.notImportable(
                archive: archive,
                reason: "its source schema \"\(UntrustedText.display(manifest.source.schema))\" is not one questbak knows")
        }
        for table in manifest.tables ?? []
        where !CoreDataSQL.tablesCarriedAsRows.contains(table.name.uppercased()) && CoreDataSQL.isCoreDataTable(table.name) {
            // Z_METADATA and Z_MODELCACHE come from their files (or, when a store holds more than
            // their one row, as rows); history and mirroring start empty.
            throw ArchiveError.notAQuestbakArchive(path: archive, reason: "it carries Core Data's own table \(table.name) as rows")
        }
        if let settings = manifest.sqlite {
            guard (9...16).contains(where: { 1 << $0 == settings.pageSize }), (0...2).contains(settings.autoVacuum) else {
                throw ArchiveError.notAQuestbakArchive(
                    path: archive,
                    reason:
                        "sqlite: page size \(settings.pageSize) and auto_vacuum \(settings.autoVacuum) are not a power of two from 512 to 65536 and 0, 1 or 2"
                )
            }
            if let problem = settings.problem {
                throw ArchiveError.notAQuestbakArchive(path: archive, reason: "sqlite: \(problem)")
            }
        }
        guard (manifest.tables ?? []).contains(where: { $0.name == CoreDataSQL.primaryKeyTable }) else {
            throw ArchiveError.notAQuestbakArchive(
                path: archive, reason: "a \(manifest.source.schema) archive must carry \(CoreDataSQL.primaryKeyTable)")
        }
        self.statements = statements
        isModel = manifest.source.schema == ArchiveManifest.Source.modelSchema
        // Statements SQLite would store otherwise, or cannot make, are refused now, before a row
        // is read, by the sentence export gives for such a store.
        do {
            replayed = try StatementReplay.check(statements)
        } catch let refusal as StatementReplay.Refusal {
            throw ImportError.notImportable(archive: archive, reason: "sql: \(refusal.reason)")
        }
        for table in manifest.tables ?? [] where replayed.virtualTables.contains(table.name) {
            throw ArchiveError.notAQuestbakArchive(
                path: archive, reason: "it carries the virtual table \(table.name) as rows (its shadow tables hold them)")
        }
        if manifest.files.contains(where: { $0.path == ArchiveManifest.modelCachePath }) {
            // Where the cache goes: a store without the table has no cache to carry.
            guard replayed.tables.contains(CoreDataSQL.modelCacheTable) else {
                throw ArchiveError.notAQuestbakArchive(
                    path: archive, reason: "it carries a model cache but its statements (sql) make no table \(CoreDataSQL.modelCacheTable)")
            }
        }
    }

    private func invalid(_ member: String, _ line: Int, _ reason: String) -> ArchiveError {
        ArchiveError.invalidLine(path: archive, member: member, line: line, reason: reason)
    }

    /// What a restore wrote: the records read by entity, the external-storage files (already
    /// checked against their digests by the reader) by name and where they were spooled, and
    /// each entity member's digest as an export of the new store will write it (the manifest's,
    /// unless repairs changed it).
    struct Written {
        var readCounts: [String: Int] = [:]
        /// By name, and where each was spooled (nil when nothing is to be written).
        var external: [(name: String, spooled: URL?)] = []
        var digests: [String: EntityMemberEncoding.Digest] = [:]
        var notes: [String] = []
        /// The statements the read-back must find, in order.
        var statements: [String] = []
        /// The digests the read-back must find of the metadata and model cache (and, for format
        /// 3, of the external-storage files, which the reader checked), by member path.
        var files: [String: String] = [:]
        /// The entities' digests are the archive's own, for a format 1 or 2 archive whose
        /// members, restored without a change, an export of the new store would write byte for
        /// byte; a read-back that finds other digests is no proof of damage (another tool may
        /// have written the lines otherwise), so it says `NotAsExported` and the restore is made
        /// again, proved by an encoding of what the transaction wrote.
        var digestsAreTheArchives = false
        /// Links kept on destination rows that the rows took as they were inserted (`RecordInserter.bindsLinksOnInsert`).
        var linksTakenOnInsert = 0
    }

    /// A format 1 or 2 archive's read-back did not find its members' digests: restore it again,
    /// its digests encoded from the transaction (`write`'s `encodingDigests`).
    struct NotAsExported: Error {}

    /// Members an export of the restored store would write byte for byte, when restored without
    /// a change: every line has `_opt` (format 2), the header names the schema written, and no
    /// property is left out (a newer archive's).
    private var membersAreAsExported: Bool {
        guard let legacy else { return false }
        return manifest.recordLinesCarryOpt && !legacy.newerSource && legacy.source.versionIdentifier == legacy.target.versionIdentifier
    }

    /// Writes the store at `url`, and the archive's external-storage files into the folder
    /// `spool` (made if need be; nil: only checked, as a dry run needs), a block at a time,
    /// however large they are. Repairs (a model archive only: duplicates by the model's
    /// uniqueness constraints, orphans, defaults, cloudIDs) go to `log`; without `validate` an
    /// archive that needs any is refused and nothing is written.
    ///
    /// `encodingDigests`: encode the records' digests inside the transaction even where the
    /// archive's own would be proof enough (a second attempt after `NotAsExported`).
    /// `notingInserts`: note what the inserted values rule out (`InsertedValues`), so that a
    /// repair rule skips a check that could find nothing. `decodingAhead`: decode a model
    /// archive's lines on a second core (`RecordInserter.linesAhead`); off only in the tests that
    /// compare the two ways. `bindingLinksOnInsert`: a model archive's links kept on destination
    /// rows go into each destination's row as it is inserted, where they are known by then
    /// (`RecordInserter.bindsLinksOnInsert`); `indexesAfterRecords`: make a format 1 or 2 archive's
    /// statements from its first index on once its records are in (`statementsAfterRecords`); each
    /// off only in the tests that compare the two ways.
    func write(
        from reader: ArchiveReader, to url: URL, spool: URL?, log: RepairLog, validate: Bool, progress: RecordProgressCounter? = nil,
        encodingDigests: Bool = false, notingInserts: Bool = true, decodingAhead: Bool = true, bindingLinksOnInsert: Bool = true,
        indexesAfterRecords: Bool = true, holdingLinks: Int = PendingLinks.limit
    ) throws -> Written {
        var written = Written()
        // A format 3 archive is read on the transaction's thread, which sets the pace: its
        // members of lines are hashed on another (`ArchiveReader.hashesLinesAside`).
        var reader = reader
        reader.hashesLinesAside = legacy == nil
        // Each page written once (`writingPagesOnce`): the file is the restore's temporary
        // store, not in place until it is read back, so no reader sees it before its WAL mode.
        try StoreWriter.writeDatabase(to: url, settings: manifest.sqlite ?? .coreData, writingPagesOnce: true) { db in
            // Every statement in its order, triggers and views among the tables as the source had
            // them; triggers stay off while the rows go in. A format 1 or 2 archive's statements
            // from its first index on (its entities' indexes, Core Data's own tables) wait for its
            // records, in their order.
            var later =
                legacy != nil && indexesAfterRecords && (manifest.tables ?? []).isEmpty ? Self.statementsAfterRecords(statements) : []
            // Another app's store: its indexes after its records too, with stand-ins meanwhile.
            let modelLater =
                legacy == nil && isModel && indexesAfterRecords
                ? ModelIndexesAfterRecords.plan(statements, carried: manifest.tables ?? []) : nil
            if let modelLater { later = modelLater.later }
            try replay(Array(statements.dropLast(later.count)), in: db)
            try modelLater?.makeStandIns(db)
            if let legacy, legacy.target.entities.contains(where: { (try? db.tableExists($0.tableName)) != true }) {
                // A table the records fill is not made yet: everything now, as it always was.
                try replay(later, in: db)
                later = []
            }
            if later.isEmpty { try checkRequiredTables(db) }
            var carried = CarriedTables(archive: archive, tables: manifest.tables ?? [], createsTables: legacy != nil)
            try carried.create(in: db)
            let tables = carried
            if later.isEmpty { written.statements = try numberEntities(db) }
            try db.execute(
                sql:
                    "CREATE TEMP TABLE questbak_links (tableName TEXT, columnName TEXT, target INTEGER, source INTEGER, entity TEXT, relationship TEXT)"
            )
            try UniqueConstraintRule.prepare(db)
            var files: [String: Data] = [:]
            // Each member's first record line, as the archive spells it (`firstLinesAreAsExported`).
            var firstLines: [String: Data] = [:]
            var records = RecordInserter(restore: self, db: db, log: log)
            if let legacy {
                let layout = try legacy.layout(db, archive: archive, numbered: !later.isEmpty)
                records.layout = layout
                if !legacy.options.asArchived && notingInserts {
                    // The checks the profile's rules make of this store (`RepairContext.inserted`).
                    let naturalKeys = legacy.target.entities.compactMap { entity -> (String, [String])? in
                        let identity = legacy.target.identity(of: entity.name)
                        return DuplicateRule.appliesTo(identity) ? (entity.name, identity.naturalKey) : nil
                    }
                    records.inserted = try noting(
                        layout: layout, naturalKeys: Dictionary(naturalKeys, uniquingKeysWith: { first, _ in first }), db: db)
                }
            } else {
                // The model's repairs run only with --validate (its layout comes with its cache).
                records.notesInsertions = validate && isModel && notingInserts
                records.bindsLinksOnInsert = isModel && bindingLinksOnInsert
                records.pendingLinks = records.bindsLinksOnInsert ? PendingLinks(limit: holdingLinks) : nil
            }
            // A model archive's lines are decoded on a second core once its layout is known (below).
            let linesAhead = legacy == nil && isModel && decodingAhead ? RecordInserter.LinesAhead() : nil
            records.linesAhead = linesAhead
            defer { linesAhead?.stop() }
            // SQLite counts AUTOINCREMENT keys as rows go in; the archive's counters replace its
            // count once every row is in (a counter above the largest key, after deletes, stays).
            var sequenceLines: [(table: ArchiveManifest.TableMember, lineNumber: Int, line: Data)] = []
            // Reading the archive (`produce`) hands each item over to what writes it (`consume`), in
            // the archive's order. A format 1 or 2 archive's schema is known before its first line,
            // so its lines are read and decoded on a second core while SQLite inserts on this one
            // (the transaction's). A format 3 archive is read here, on the transaction's thread,
            // and each batch is written where it is read (`produce(consume)`): an error the
            // inserts throw then reaches the reader at the line it read last, which, for a member
            // whose bytes are damaged, reports the checksum instead (`ArchiveReader.readLines`).
            // Handed over to another thread, a line's error would come back at a later point of the
            // reading and could win over the checksum. (Reading alone on a second core gained
            // nothing measurable, 2.38 s either way at 100k, and cost 10 MB of peak memory.) Only
            // the decoding of a model archive's lines, which has no effect but its row, runs
            // ahead on a second core (`linesAhead`), taken back line by line as the inserts reach
            // each one.
            enum Item {
                /// Lines and the members they are of (a batch holds one or two), each line naming
                /// its member by index: a member's strings were retained on the reading core and
                /// released on this one for each line.
                case records(members: [ArchiveManifest.EntityMember], lines: [RecordLine])
                case tableLine(ArchiveManifest.TableMember, Int, Data)
                case file(ArchiveManifest.FileMember, Data)
                case external(name: String, spooled: URL?)
            }
            let legacy = self.legacy
            let archive = self.archive
            // How a format 1 or 2 archive's lines become rows, laid out once for the reading core.
            let lineColumns = records.layout.flatMap { layout in legacy?.lineColumns(layout) }
            records.lineColumns = lineColumns
            let produce: (_ handOver: (Item) throws -> Void) throws -> Void = { handOver in
                var batch: [RecordLine] = []
                var members: [ArchiveManifest.EntityMember] = []
                var spooledCount = 0
                func flush() throws {
                    if !batch.isEmpty { try handOver(.records(members: members, lines: batch)) }
                    batch.removeAll(keepingCapacity: true)
                    members.removeAll(keepingCapacity: true)
                }
                _ = try reader.read(
                    onRecordLine: { member, lineNumber, line in
                        linesAhead?.submit((member.name, line))
                        let content: RecordLine.Content =
                            try legacy.map {
                                .decoded(
                                    DecodedRecord(
                                        try $0.decode(
                                            line: line, member: member, lineNumber: lineNumber, archive: archive,
                                            columns: lineColumns ?? LegacyArchive.LineColumns())))
                            }
                            ?? (linesAhead != nil ? .ahead : .line(line))
                        if members.last?.path != member.path { members.append(member) }
                        // Line 1 is the member's header: line 2 its first record.
                        batch.append(
                            RecordLine(
                                member: members.count - 1, lineNumber: lineNumber, content: content,
                                firstLine: lineNumber == 2 ? line : nil))
                        if batch.count >= 512 { try flush() }
                    },
                    onTableLine: { table, lineNumber, line in
                        try flush()
                        try handOver(.tableLine(table, lineNumber, line))
                    },
                    onFile: { file, data in
                        try flush()
                        try handOver(.file(file, data))
                    },
                    onExternalFile: { file, bytes in
                        try flush()
                        // Spooled by number: the file's own name may be as long as a name can be.
                        let spooled = spool?.appendingPathComponent("\(spooledCount)")
                        spooledCount += 1
                        if let spooled { try Self.spool(bytes, to: spooled) }
                        try handOver(.external(name: String(file.path.dropFirst(ExternalStorage.memberPrefix.count)), spooled: spooled))
                    })
                try flush()
            }
            let consume: (Item) throws -> Void = { item in
                switch item {
                case .records(let members, let lines):
                    records.noteDecoded(lines, members: members)
                    // Counted by runs of one member's lines (a batch holds one or two), not with
                    // a look-up by the member's name for each line.
                    // The run's member is taken out of the array once for its lines: taken for
                    // each line, its strings were retained and released for each row.
                    var run: (member: Int, count: Int)?
                    defer { if let run { written.readCounts[members[run.member].name, default: 0] += run.count } }
                    guard var member = members.first else { break }
                    for record in lines {
                        if run?.member == record.member {
                            run?.count += 1
                        } else {
                            if let run { written.readCounts[members[run.member].name, default: 0] += run.count }
                            run = (record.member, 1)
                            member = members[record.member]
                        }
                        if let line = record.firstLine { firstLines[member.name] = line }
                        try records.insert(record, of: member, files: files)
                        try progress?.count(member.name)
                    }
                case .tableLine(let table, let lineNumber, let line):
                    if table.name == CoreDataSQL.autoincrementTable {
                        sequenceLines.append((table, lineNumber, line))
                    } else {
                        try tables.insert(line: line, table: table, lineNumber: lineNumber, into: db)
                    }
                case .file(let file, let data):
                    files[file.path] = data
                case .external(let name, let spooled):
                    written.external.append((name, spooled))
                }
            }
            if legacy != nil {
                try HandOff.run(capacity: 16, produce: produce, consume: consume)
            } else {
                try produce(consume)
            }
            // Each index built from its table's rows in one pass, as a replay of `sqlite3 .dump`
            // builds them; kept up row by row they cost 10% of that replay's time.
            func makeStatementsAfterRecords() throws {
                FaultPoint.reached("statements after the records")
                if let modelLater { try modelLater.finish(db) { try replay($0, in: db) } } else { try replay(later, in: db) }
                try checkRequiredTables(db)
                written.statements = try numberEntities(db)
            }
            if !later.isEmpty, modelLater == nil { try makeStatementsAfterRecords() }
            // A format 1 or 2 archive's members were checked against its schema with the manifest.
            if legacy == nil { try records.checkEveryEntityListed(files: files) }
            if let inserted = records.inserted {
                // Rows an entity's table got as a carried table's are rows no insert noted; a row
                // refused was noted but not stored as bound.
                if let layout = records.layout, !carriedTableNames.isDisjoint(with: layout.entities.map(\.table)) { inserted.invalidate() }
                if records.refusedRow { inserted.invalidate() }
                inserted.settle(loggedCount: log.total)
                records.context?.inserted = inserted
            }
            // Every link a destination's row took as it was inserted is in place; the link step
            // sets and checks the rest (none, in an export's member order, unless a repair is due).
            let boundOnInsert = try records.linkGroupsBoundOnInsert()
            written.linksTakenOnInsert = records.linksTakenOnInsert
            // Another app's, once the links' cursors are closed: SQLite changes no table's indexes
            // while a statement reads (the table is "locked").
            if modelLater != nil { try makeStatementsAfterRecords() }
            if let context = records.context {
                written.notes += try RepairPipeline.run(in: context, phase: .restoring)
                try Self.applyDestinationLinks(db, log: log, skipping: boundOnInsert)
                // Without --validate the store is restored as it was archived: what the model would
                // repair is the app's data as the store held it. (Duplicates a unique index refuses
                // and links no column can hold cannot be stored as they were: those need --validate.)
                if validate {
                    written.notes += try RepairPipeline.run(in: context, phase: .repairing)
                }
            } else {
                try Self.applyDestinationLinks(db, log: log, skipping: boundOnInsert)
            }
            if let legacy, !legacy.options.asArchived {
                // A store an app profile describes: the same rules, driven by the profile's version
                // as well as the layout (the singleton, natural keys, symbolic defaults, cloudIDs
                // derived from natural keys). Z_PRIMARYKEY is in place already (`createEntityKeys`).
                var context = try RepairContext(
                    db: db, version: legacy.target, defaults: legacy.options.schemas.last ?? legacy.target,
                    now: legacy.options.now ?? legacy.createdAt, randomIDs: legacy.options.randomIDs,
                    cloudIDKind: legacy.source.entities.contains { $0.cloudID != nil } ? .repair : .migration,
                    log: log, path: archive, keepDistinctIDs: legacy.options.keepDistinctIDs)
                context.inserted = records.inserted
                written.notes += try RepairPipeline.run(in: context)
            }
            if !validate && log.repairs > 0 {
                throw ImportError.repairsNeeded(archive: archive, counts: log.counts.filter { $0.key.hasPrefix("repair.") })
            }
            if carriedTableNames.contains(CoreDataSQL.autoincrementTable) {
                try db.execute(sql: "DELETE FROM \(CoreDataSQL.autoincrementTable)")
                for item in sequenceLines { try tables.insert(line: item.line, table: item.table, lineNumber: item.lineNumber, into: db) }
            }
            try db.execute(sql: "DROP TABLE temp.questbak_links")
            try db.execute(sql: "DROP TABLE temp.questbak_duplicates")
            if let legacy {
                try legacy.finishEntityKeys(db, inserted: records.largestKeys, log: log)
                let (note, metadataFiles) = try legacy.writeMetadata(db, files: files, archive: archive, log: log)
                if let note { written.notes.append(note) }
                written.files = metadataFiles
            } else {
                guard let plist = files[ArchiveManifest.metadataPath] else {
                    throw ArchiveError.missingMember(path: archive, member: ArchiveManifest.metadataPath)
                }
                // Carried as rows, these tables came back with the other tables.
                if !carriedTableNames.contains(CoreDataSQL.metadataTable) {
                    try CoreDataSQL.insertMetadata(db, uuid: manifest.source.storeUUID, plist: plist)
                }
                if let cache = files[ArchiveManifest.modelCachePath], !carriedTableNames.contains(CoreDataSQL.modelCacheTable) {
                    try CoreDataSQL.insertModelCache(db, cache)
                }
                written.files = Dictionary(manifest.files.map { ($0.path, $0.sha256) }, uniquingKeysWith: { first, _ in first })
            }
            written.notes += try ExternalStorage.missingReferences(db, available: Set(written.external.map(\.name)))
            // What the read-back must find: the archive's members as the manifest lists them, or,
            // after repairs, the repaired records (encoded here; without repairs one pass, the
            // read-back's, is enough). A format 1 or 2 archive's members are in the format an
            // export of the new store writes only when `membersAreAsExported` (format 1 has no
            // `_opt`, another version's header names another version) and nothing was changed
            // or logged (a migration's cloudIDs, a default, a raised Z_MAX, computed metadata);
            // even then, lines another tool wrote may spell the same records otherwise, which
            // the read-back finds (`NotAsExported`). Otherwise its records are encoded here.
            var archiveDigestsProve = legacy == nil ? log.repairs == 0 : membersAreAsExported && log.total == 0 && !encodingDigests
            if archiveDigestsProve, legacy != nil {
                // An archive another tool (or an older export) spelled otherwise is found here, by
                // its first lines, and proved by the encoding below, rather than restored twice.
                archiveDigestsProve = try firstLinesAreAsExported(
                    db, layout: records.layout, firstLines: firstLines, early: records.firstRecords, lowestKeys: records.lowestKeys)
            }
            if !archiveDigestsProve {
                written.digests = try digests(db, layout: records.layout, path: url.path)
            } else {
                written.digestsAreTheArchives = legacy != nil
                for member in manifest.entities {
                    written.digests[member.name] = .init(count: member.count, bytes: member.bytes, sha256: member.sha256)
                }
            }
        }
        return written
    }

    /// Runs `some` of the statements (`StatementReplay.replay`), a refusal said as the archive's.
    private func replay(_ some: [String], in db: Database) throws {
        do {
            _ = try StatementReplay.replay(some, in: db)
        } catch let refusal as StatementReplay.Refusal {
            throw ImportError.notImportable(archive: archive, reason: "sql: \(refusal.reason)")
        }
    }

    /// Once every statement is made: Core Data's own tables are there.
    private func checkRequiredTables(_ db: Database) throws {
        for table in CoreDataSQL.requiredTables where try !db.tableExists(table) {
            throw ArchiveError.notAQuestbakArchive(path: archive, reason: "its statements (sql) make no table \(table)")
        }
    }

    /// Once every statement is made and the carried tables: a format 1 or 2 archive's entities
    /// are numbered (its statements are its schema's: its own tables come with their own
    /// statements); returns the statements the read-back must find, in order.
    private func numberEntities(_ db: Database) throws -> [String] {
        try legacy?.createEntityKeys(db)
        return legacy == nil ? statements : try CoreDataSQL.schemaStatements(db)
    }

    /// What the inserts will note for the repair rules' checks of a store laid out as `layout`:
    /// natural keys as given, the filters sized by the manifest's count of records. The columns'
    /// affinities are read here, once, not for each row.
    fileprivate func noting(layout: ModelLayout, naturalKeys: [String: [String]], db: Database) throws -> InsertedValues {
        var affinities: [String: [String: ColumnAffinity]] = [:]
        for table in Set(layout.entities.map(\.table)) {
            affinities[table] = Dictionary(
                try db.columns(in: table).map { ($0.name.uppercased(), ColumnAffinity(declaredType: $0.type)) },
                uniquingKeysWith: { first, _ in first })
        }
        let inserted = InsertedValues(
            naturalKeys: naturalKeys, expectedRecords: manifest.entities.reduce(0) { $0 + $1.count }, affinities: affinities)
        // The notes compare text byte for byte; a checks' `GROUP BY` compares it by the column's
        // collation, which may take two texts for one: such a store's checks all run.
        if try Set(layout.entities.map(\.table)).contains(where: { try CoreDataSQL.declaresCollation(db, table: $0) }) {
            inserted.invalidate()
        }
        return inserted
    }

    /// Whether each entity's first record, encoded from the store as an export writes it, is
    /// byte for byte the archive's first line of that member: a cheap sign that the archive's
    /// members are spelled as an export spells them (the read-back proves the rest).
    ///
    /// `early`: an entity's answer taken as soon as its first line's row was inserted
    /// (`RecordInserter.noteFirstRecord`), by its key; `lowestKeys`: the lowest key inserted into
    /// each entity. Where the first line's row has the entity's lowest key, the early answer is
    /// this one: the record encoded first is the one with the lowest key; it is the same row,
    /// unchanged since (this is asked only when the repair log is empty: no rule changed or
    /// deleted a record, and the link step set nothing), and an entity with no to-many encodes
    /// a row from its own columns alone (`noteFirstRecord` answers only for those). Its
    /// encoding from the finished store began with `count(*)` of the entity's rows, for the
    /// member's header that is not compared: a pass over the table after the records, with the
    /// other core idle (10 ms at 100k records). Every other entity is encoded here, as before.
    private func firstLinesAreAsExported(
        _ db: Database, layout: ModelLayout?, firstLines: [String: Data], early: [String: (key: Int64, asExported: Bool)],
        lowestKeys: [String: Int64]
    ) throws -> Bool {
        for name in entityNames {
            if let answer = early[name], lowestKeys[name] == answer.key {
                if !answer.asExported { return false }
                continue
            }
            guard let plan = layout?.entity(named: name) else { return false }
            guard let first = try firstRecordLine(db, plan: plan) else {
                // No record: nothing to compare, unless the archive has one.
                if firstLines[name] != nil { return false }
                continue
            }
            guard let line = firstLines[name], Self.isLine(first, line) else { return false }
        }
        return true
    }

    /// Whether `encoded`, a record's line as an export writes it, is `line` and its newline.
    fileprivate static func isLine(_ encoded: [UInt8], _ line: Data) -> Bool {
        encoded.last == UInt8(ascii: "\n") && Data(encoded.dropLast()) == line
    }

    /// The line of `plan`'s record with the lowest key, as an export writes it; nil when it has none.
    fileprivate func firstRecordLine(_ db: Database, plan: ModelLayout.EntityPlan) throws -> [UInt8]? {
        struct Enough: Error {}
        var chunks: [[UInt8]] = []
        do {
            _ = try ModelMemberEncoding.encode(db, plan: plan, schemaVersion: schemaVersion, path: archive) { chunk in
                chunks.append(chunk)
                // The header, then the first record: enough.
                if chunks.count == 2 { throw Enough() }
            }
        } catch is Enough {}
        return chunks.count == 2 ? chunks[1] : nil
    }

    /// Writes the bytes `bytes` gives into a new file at `url`, a block at a time.
    private static func spool(_ bytes: ArchiveReader.ExternalFileBytes, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw OutputError.cannotCreate(path: url.path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: FramedTar.blockSize)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try bytes($0) }
            if count == 0 { return }
            try buffer.withUnsafeBytes {
                try FramedTar.writeAll(descriptor, UnsafeRawBufferPointer(rebasing: $0[0..<count]), path: url.path)
            }
        }
    }

    /// Each entity member's digest, encoded from the store open on `db` as an export would (with
    /// `readers`, other connections to the same closed file, a large entity's in ranges of keys).
    func digests(
        _ db: Database, layout: ModelLayout?, path: String, readers: KeyRangeReaders? = nil
    ) throws -> [String: EntityMemberEncoding.Digest] {
        var digests: [String: EntityMemberEncoding.Digest] = [:]
        let tablesOfOneEntity = readers == nil ? [] : tablesOnlyItsRecordsFill(layout)
        for name in entityNames {
            if let plan = layout?.entity(named: name) {
                digests[name] = try EntityMemberEncoding.Digest.of {
                    try ModelMemberEncoding.encode(
                        db, plan: plan, schemaVersion: schemaVersion, path: path, readers: readers,
                        tableIsTheEntitys: tablesOfOneEntity.contains(plan.table), write: $0)
                }
            } else {
                digests[name] = try GenericMemberEncoding.digest(
                    db, entity: name, table: CompiledEntity.tableName(name), schemaVersion: schemaVersion, path: path)
            }
        }
        return digests
    }

    /// The tables of a format 1 or 2 archive's restore that hold only the records of one entity,
    /// by construction: each is the table of one entity of the target's schema (no other entity's
    /// records share it), and the archive carries no table as rows. Then every row of it came in
    /// through `RecordInserter.insertRow`, with that entity's number in `Z_ENT` (the statements
    /// make the tables empty; the repair rules update and delete records, and insert only into
    /// temporary tables), so the read-back may cut its ranges from the table's `count(*)`, `min`
    /// and `max` (`KeyRangeReaders.rangeStarts(_:everyKeyOf:)`) instead of a pass over the
    /// entity's keys on the thread the range readers wait for.
    ///
    /// *Why the proof is the same.* The lines are the same either way: every range reads only
    /// the entity's rows (`Z_ENT =` its number), in key order, and the ranges' starts, whatever
    /// they are, cover every key from the lowest. Only the count in the member's header comes
    /// from `count(*)` of the table instead of the entity's rows: equal when the table holds no
    /// other row, and larger otherwise, when the digest then differs and the proof fails. So
    /// the proof fails wherever it failed before, and also on a row of another entity in the
    /// table, which the restore never writes. `ReadBackTests` compares both ways, on damaged
    /// stores too.
    ///
    /// Another app's archive (format 3, by its model): the tables the layout's row checks found,
    /// on the store read back, to hold its entity's records and no other row
    /// (`ModelLayout.tablesOfOneEntity`, empty unless the rows were checked), as export cuts the
    /// ranges of the store it reads. *Why the proof is the same:* the layout the read-back makes
    /// checks every row (`checkRows`) before any member is encoded, and fails the proof on a row
    /// of no entity; where a table holds one entity's rows only, `count(*)` is the entity's
    /// count and any ascending starts from its lowest key give its lines in the same order, so
    /// the digests are those the pass over the keys gave, failing or not.
    private func tablesOnlyItsRecordsFill(_ layout: ModelLayout?) -> Set<String> {
        if legacy == nil, isModel { return layout?.tablesOfOneEntity ?? [] }
        guard legacy != nil, carriedTableNames.isEmpty, let layout else { return [] }
        var entitiesByTable: [String: Int] = [:]
        for plan in layout.entities { entitiesByTable[plan.table, default: 0] += 1 }
        return Set(entitiesByTable.filter { $0.value == 1 }.keys)
    }

    /// The statements a format 1 or 2 archive's restore makes once its records are in: those from
    /// its first index on, where every statement before it makes a table (the tables the records
    /// fill among them), none makes a trigger or a view, and no unique index is on a table the
    /// records fill (history's is on `ATRANSACTIONSTRING`, which a restore leaves empty); else none.
    ///
    /// *Why the store is the same.* The statements are made in their order, so `sqlite_master`
    /// holds the same rows in the same order (their root pages too where `auto_vacuum` keeps
    /// root pages first, as in Core Data's stores; elsewhere a later table's root page is placed
    /// after the records' pages, which only the file's layout shows). An index holds one
    /// entry a row of its table, made from the row's columns: built from the rows in one pass, or
    /// kept up as each goes in, it holds the same entries (`PRAGMA integrity_check`, which the
    /// read-back runs, compares them with the rows). `Z_PRIMARYKEY` gets the same rows, and the
    /// layout the numbers they hold (`LegacyArchive.entityNumbers`). Nothing reads the later tables
    /// or the indexes while the records go in; the repair rules run after, as before. A unique
    /// index on a table the records fill would refuse a duplicate at its row, naming the record
    /// (made after, it would fail as a whole), and a trigger must not see the rows go in: such
    /// statements are all made first, as before. `IndexesAfterRecordsTests` compares the two ways.
    static func statementsAfterRecords(_ statements: [String]) -> [String] {
        guard let first = statements.firstIndex(where: { isIndex($0) || isUniqueIndex($0) }),
            statements[..<first].allSatisfy({ normalized($0).hasPrefix("CREATE TABLE ") }),
            !statements.contains(where: isLater),
            statements[first...].allSatisfy({ !isUniqueIndex($0) || CoreDataSQL.history.contains($0) })
        else { return [] }
        return Array(statements[first...])
    }

    private static func isIndex(_ sql: String) -> Bool { normalized(sql).hasPrefix("CREATE INDEX ") }
    private static func isUniqueIndex(_ sql: String) -> Bool { normalized(sql).hasPrefix("CREATE UNIQUE INDEX ") }

    /// Upper-cased, each run of white space one space: how the prefixes are compared.
    private static func normalized(_ sql: String) -> String {
        sql.uppercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    static func isLater(_ sql: String) -> Bool {
        let words = normalized(sql)
        return laterPrefixes.contains { words.hasPrefix($0) }
    }

    /// Links kept on the destination's row (a to-many without an inverse) are set once every
    /// record is in. A link to a record the archive lacks is left out, and of two sources that
    /// name one destination (which one column cannot hold) the lower `_pk` keeps it: repairs,
    /// reported, which an import without `--validate` refuses.
    ///
    /// `skipping`: groups of links (a table and column) every one of which a destination's row
    /// took as it was inserted (`RecordInserter.linkGroupsBoundOnInsert`), which this step would
    /// set as they are and find nothing to drop in.
    static func applyDestinationLinks(_ db: Database, log: RepairLog, skipping: DestinationLinkGroups = .none) throws {
        if case .all = skipping { return }
        // Every query below looks links up by destination: without this index each lookup read
        // them all, and 500,000 steps of a recipe took hours instead of seconds.
        try db.execute(
            sql: "CREATE INDEX IF NOT EXISTS temp.questbak_links_target ON questbak_links (tableName, columnName, target, source)")
        let targets = try Row.fetchAll(db, sql: "SELECT DISTINCT tableName, columnName FROM temp.questbak_links ORDER BY 1, 2")
        let key = CoreDataSQL.keyColumn
        for target in targets {
            let table: String = target[0]
            let column: String = target[1]
            if case .some(let bound) = skipping, bound.contains(DestinationLinkGroup(table: table, column: column)) { continue }
            let scope = "FROM temp.questbak_links WHERE tableName = ? AND columnName = ?"
            let join =
                "UPDATE \(table) SET \(column) = l.source FROM temp.questbak_links l WHERE l.tableName = ? AND l.columnName = ? AND l.target = \(table).\(key)"
            // Most stores need no repair here: the join is made first, and when it changed as
            // many rows as there are links, every link names a row of the table, and no two
            // name the same one (SQLite counts a row the join reaches twice once, and a table
            // keyed by its rowid has one row a key), so the query below would find nothing to
            // drop. (A table keyed otherwise may hold a key twice: its links are checked first.) Otherwise the links are dropped as below and
            // the join made again: it sets every row a link is left for (each such row keeps
            // its lowest source, and a row no link names was not reached the first time), so
            // the rows end as if it had been made once, after the deletions, and the entries
            // are the same, in the same order. `DestinationLinksTests` compares the two.
            if try KeyRangeReaders.isKeyedByRowid(db, table: table) {
                try db.execute(sql: join, arguments: [table, column])
                let reached = db.changesCount
                if try Int.fetchOne(db, sql: "SELECT count(*) \(scope)", arguments: [table, column]) == reached { continue }
            }
            let dropped = try Row.fetchAll(
                db,
                sql: """
                    SELECT source, target, entity, relationship, rowid \(scope)
                      AND (target NOT IN (SELECT \(CoreDataSQL.keyColumn) FROM \(table))
                           OR source > (SELECT min(l.source) FROM temp.questbak_links l
                                        WHERE l.tableName = ? AND l.columnName = ? AND l.target = questbak_links.target))
                    ORDER BY source, target
                    """, arguments: [table, column, table, column])
            for row in dropped {
                try log.record(
                    RepairEntry(
                        rule: .orphan, kind: .repair, entity: row[2], primaryKey: row[0], cloudID: nil, field: row[3],
                        old: .value(.integer(row[1])), new: .value(.null)))
                try db.execute(sql: "DELETE FROM temp.questbak_links WHERE rowid = ?", arguments: [row[4]])
            }
            // After the deletions above, a target has one source (or, after a merge of two
            // sources, the same source more than once): the join sets what a subquery per row
            // (`= (SELECT source … AND target = Z_PK) WHERE Z_PK IN (SELECT target …)`) set, with
            // one look-up a link instead of two. `DestinationLinksTests` compares the two.
            try db.execute(sql: join, arguments: [table, column])
        }
    }

    /// One record line as read: a format 1 or 2 archive's already decoded (the line itself is not
    /// kept), any other's as it is.
    private struct RecordLine {
        enum Content {
            case line(Data)
            /// A model archive's line handed to `linesAhead`, whose row its insert takes from
            /// there: not kept here too, so that it is freed on the decoder's thread once decoded
            /// rather than on the transaction's with its batch.
            case ahead
            case decoded(DecodedRecord)
        }
        /// Its member, by index into its batch's members.
        var member: Int
        var lineNumber: Int
        var content: Content
        /// The line itself, when it is its member's first record.
        var firstLine: Data?
    }

    /// A format 1 or 2 archive's decoded line without what every line of its member holds alike:
    /// `LegacyArchive.decode` gives each line its member's name as its entity and the plan of
    /// `LineColumns.entities[member.name]`, which the inserts take once a member
    /// (`RecordInserter.linePlan`). Kept, each line's plan was retained on the reading core and
    /// released on the transaction's, the plan's counts passed from one core's cache to the
    /// other's for every line.
    private struct DecodedRecord {
        var row: LegacyArchive.Row?
        /// Whether the line has an entity (`DecodedLine.entity`, which is then its member's name).
        var hasEntity: Bool
        /// Whether its entity is laid out in the target (`DecodedLine.plan`).
        var hasPlan: Bool
        var unstorable: [RepairEntry]

        init(_ decoded: LegacyArchive.DecodedLine) {
            row = decoded.row
            hasEntity = decoded.entity != nil
            hasPlan = decoded.plan != nil
            unstorable = decoded.unstorable
        }
    }

    /// Inserts record lines: through the archive's model (its cache comes before the records; a
    /// format 1 or 2 archive's is its schema's, laid out before the first), or column by column for
    /// a generic archive.
    private struct RecordInserter {
        let restore: StatementRestore
        let db: Database
        let log: RepairLog
        var layout: ModelLayout?
        /// The largest key inserted, by entity: a format 1 or 2 archive's `Z_MAX` is made from it.
        var largestKeys: [String: Int64] {
            var keys = earlierLargestKeys
            if let rowEntity, let key = rowEntity.largestKey { keys[rowEntity.name] = max(keys[rowEntity.name] ?? 0, key) }
            return keys
        }
        /// The lowest key inserted, by entity (`firstLinesAreAsExported`).
        var lowestKeys: [String: Int64] {
            var keys = earlierLowestKeys
            if let rowEntity, let key = rowEntity.lowestKey { keys[rowEntity.name] = min(keys[rowEntity.name] ?? key, key) }
            return keys
        }
        private var earlierLowestKeys: [String: Int64] = [:]
        /// Each entity's first line compared with its row as soon as that was inserted
        /// (`noteFirstRecord`), by the row's key.
        var firstRecords: [String: (key: Int64, asExported: Bool)] = [:]
        /// `largestKeys` of the entities inserted into before the current one (`rowEntity`).
        private var earlierLargestKeys: [String: Int64] = [:]
        /// The entity whose row was inserted last, its insert statement and the largest key it
        /// got since it became the current one: rows come member by member, so nearly every row
        /// is its, and needs no look-up by its entity's name (its statement's and its largest
        /// key's, read and written: three hashes of a `String` a row).
        private var rowEntity: (name: String, insert: Statement, largestKey: Int64?, lowestKey: Int64?)?
        /// The arguments of the row being inserted before and after the record's values (its
        /// three leading values; the sources of the links it takes), kept to be filled again: a
        /// new array a row was an allocation, and the record's values, bound from their own
        /// array, are not copied in (each text's storage retained and released).
        private var rowArguments: [StoredValue] = []
        private var rowLinkSources: [StoredValue] = []
        /// How a format 1 or 2 archive's lines are decoded (`linePlan`), and the last member's plan.
        var lineColumns: LegacyArchive.LineColumns?
        private var lastLinePlan: (member: String, plan: LinePlan?)?
        /// A model archive's last member's plan (`modelPlan`).
        private var lastModelPlan: (member: String, plan: LinePlan)?
        /// What the model's repairs work on, once the model is known.
        var context: RepairContext?
        /// What the inserted values say of the repairs' checks; nil when no repair will run.
        var inserted: InsertedValues?
        /// A row a constraint refused (one the notes count but the table does not hold).
        var refusedRow = false
        /// Whether a model archive's inserts are noted (`inserted`, made with its layout).
        var notesInsertions = false
        var statements: [String: (insert: Statement, columns: [String])] = [:]
        /// Each entity's reader of its lines, made at its first line (when they are not decoded ahead).
        var lineDecoders: [String: ModelMemberEncoding.LineDecoder] = [:]
        /// A model archive's record lines (by entity name), decoded on a second core as they are
        /// read, into the row or the error `LineDecoder` gives; started once the layout is made.
        typealias LinesAhead = WorkAhead<(entity: String, line: Data), Result<ModelMemberEncoding.Row, Error>>
        var linesAhead: LinesAhead?
        /// `linkInsert()`'s statement, once made.
        var linkInsertStatement: Statement?
        /// Whether a destination's row takes the links kept on it that are known when it is
        /// inserted (a model archive's: its source's member comes first in an export's order).
        var bindsLinksOnInsert = false
        /// How many links of each group went into `temp.questbak_links`, and the groups' readers.
        var linkCounts: [DestinationLinkGroup: Int] = [:]
        var linkCursors: [DestinationLinkGroup: DestinationLinkCursor] = [:]
        var linksTakenOnInsert = 0
        /// The links kept on destinations' rows, held until something reads their table (`PendingLinks`);
        /// nil when no row takes links on insert.
        var pendingLinks: PendingLinks?
        /// The kinds of the last entity's links to destinations' rows (`PendingLinks.number(of:)`),
        /// by its to-manys: a member's rows come one after another.
        var lastLinkKinds: (entity: String, numbers: [Int])?
        /// Each entity's links to take (made at its first row), and the last one asked for: a
        /// member's rows come one after another.
        var linkBindings: [String: DestinationLinkBinding] = [:]
        var lastLinkBinding: (entity: String, binding: DestinationLinkBinding?)?
        /// A generic archive's entity tables: their columns but `Z_PK`, and every column's affinity
        /// (`Z_PK`'s first), read once.
        var genericColumns: [String: (names: [String], affinities: [ColumnAffinity])] = [:]

        init(restore: StatementRestore, db: Database, log: RepairLog) {
            self.restore = restore
            self.db = db
            self.log = log
        }

        mutating func modelLayout(files: [String: Data], member: String) throws -> ModelLayout {
            if let layout { return layout }
            guard let cache = files[ArchiveManifest.modelCachePath] else {
                throw restore.invalid(member, 1, "the archive's model (\(ArchiveManifest.modelCachePath)) must come before its records")
            }
            let model: CompiledModel
            do {
                model = try ModelCacheDecoder.decode(cache)
            } catch {
                throw ArchiveError.notAQuestbakArchive(
                    path: restore.archive,
                    reason: "\(ArchiveManifest.modelCachePath): \((error as? LocalizedError)?.errorDescription ?? "\(error)")")
            }
            // The model is the store's only if its hashes are the metadata's (export checked it; a
            // tampered archive may not have been made by an export).
            guard let plist = files[ArchiveManifest.metadataPath] else {
                throw restore.invalid(member, 1, "the archive's metadata (\(ArchiveManifest.metadataPath)) must come before its records")
            }
            guard let metadata = try? StoreMetadata(uuid: "", encodedPlist: plist), case .dictionary = metadata.plist else {
                throw ArchiveError.unexpectedMember(
                    path: restore.archive, member: ArchiveManifest.metadataPath, reason: "cannot be decoded as a dictionary of metadata")
            }
            let differing = metadata.hashDifferences(from: ModelVersionHashes(model: model))
            guard differing.isEmpty else {
                throw ArchiveError.notAQuestbakArchive(
                    path: restore.archive,
                    reason: "its model cache disagrees with its metadata (hashes differ for \(differing.joined(separator: ", ")))")
            }
            let made = try ModelLayout(db, model: model, checkRows: false, carriedAsTables: restore.carriedTableNames)
            if let problem = made.problems.first {
                throw ArchiveError.notAQuestbakArchive(
                    path: restore.archive, reason: "its model does not explain its own statements: \(problem)")
            }
            layout = made
            if notesInsertions { inserted = try restore.noting(layout: made, naturalKeys: [:], db: db) }
            context = RepairContext(
                db: db, layout: made, model: model, log: log, path: restore.archive, storeUUID: restore.manifest.source.storeUUID)
            // Lines can be decoded from here on: the layout is the one every line is inserted by.
            // (Made at the first record's insert, as without the second core: a model cache that
            // comes after the records, or is damaged, fails there, as before.)
            if let linesAhead, !linesAhead.started {
                let plans = Dictionary(made.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
                var decoders: [String: ModelMemberEncoding.LineDecoder] = [:]
                // A member's lines come one after another: its decoder is looked up once for them.
                var current: (entity: String, decoder: ModelMemberEncoding.LineDecoder)?
                linesAhead.start { input in
                    if current?.entity != input.entity {
                        // A line of an entity the model lacks is never taken: its insert fails first.
                        guard let plan = plans[input.entity] else {
                            current = nil
                            return Result.failure(NotInTheModel())
                        }
                        current = (input.entity, Self.decoder(of: plan, in: &decoders))
                    }
                    guard let decoder = current?.decoder else { return Result.failure(NotInTheModel()) }
                    return Result { try decoder.decode(input.line) }
                }
            }
            return made
        }

        struct NotInTheModel: Error {}

        /// `plan`'s line reader, made at its first line and kept in `decoders`.
        static func decoder(
            of plan: ModelLayout.EntityPlan, in decoders: inout [String: ModelMemberEncoding.LineDecoder]
        ) -> ModelMemberEncoding.LineDecoder {
            if let known = decoders[plan.name] { return known }
            let made = ModelMemberEncoding.LineDecoder(plan: plan, carriesOpt: true)
            decoders[plan.name] = made
            return made
        }

        mutating func insert(_ read: RecordLine, of member: ArchiveManifest.EntityMember, files: [String: Data]) throws {
            let lineNumber = read.lineNumber
            switch read.content {
            case .decoded(let decoded):
                // (Not `let legacy = restore.legacy`: a copy of the archive's description, its
                // strings, arrays and dictionaries retained and released, for each row.)
                guard restore.legacy != nil, layout != nil else {
                    preconditionFailure("a line is decoded only for a format 1 or 2 archive, laid out before its first record")
                }
                // What the target cannot store (`--allow-newer`) is reported, not written.
                for entry in decoded.unstorable { try log.record(entry) }
                guard decoded.hasEntity, let row = decoded.row else { return }
                guard decoded.hasPlan, let target = linePlan(of: member) else {
                    throw restore.invalid(
                        member.path, lineNumber, "entity \(member.name) is not part of schema \(restore.schemaVersion)")
                }
                // Noted with its batch, before the batch's first insert (`noteDecoded`).
                try insertRow(
                    target, primaryKey: row.primaryKey, opt: row.opt, values: row.values, duplicate: nil, member: member.path,
                    lineNumber: lineNumber)
                if let line = read.firstLine {
                    noteFirstRecord(plan: target.plan, member: member.name, key: row.primaryKey, line: line)
                }
            case .ahead,
                .line where restore.isModel:
                // Read through the class (`linePlan.plan`), not copied into a local for each row.
                let linePlan = try modelPlan(of: member, files: files, lineNumber: lineNumber)
                let output: Result<ModelMemberEncoding.Row, Error>
                if let linesAhead {
                    // Every record line was submitted, in the order the inserts reach them
                    // (the first error ends the restore), so the next output is this line's.
                    output = linesAhead.next()
                } else {
                    guard case .line(let line) = read.content else { preconditionFailure("a line is kept unless decoded ahead") }
                    output = Result { try Self.decoder(of: linePlan.plan, in: &lineDecoders).decode(line) }
                }
                // The row moved out of its output, and into the output given back: taken with
                // `get()` and given back as `.success(row)`, it was copied twice a row (its arrays
                // retained and released each time, on the thread that sets the pace).
                switch consume output {
                case .failure(let error as ModelMemberEncoding.LineError):
                    throw restore.invalid(member.path, lineNumber, error.reason)
                case .failure(let error):
                    throw error
                case .success(let row):
                    try insertModelRow(row, linePlan, member: member, lineNumber: lineNumber)
                    // Destroyed on the decoder's thread, where it was made, once inserted.
                    linesAhead?.recycle(.success(row))
                }
            case .line(let line):
                try insertGeneric(line: line, member: member, lineNumber: lineNumber)
            }
        }

        /// Inserts a model archive's decoded row into its entity's table, and its to-manys' links.
        mutating func insertModelRow(
            _ row: ModelMemberEncoding.Row, _ linePlan: LinePlan, member: ArchiveManifest.EntityMember, lineNumber: Int
        ) throws {
            if let inserted { linePlan.observe(row, in: inserted) }
            try insertRow(
                linePlan, primaryKey: row.primaryKey, opt: row.opt, values: row.values, duplicate: row, member: member.path,
                lineNumber: lineNumber)
            for (index, (link, targets)) in zip(linePlan.plan.toMany, row.links).enumerated() where !targets.isEmpty {
                switch link.storage {
                case .joinTable(let table, let source, let destination):
                    let statement = try statement(table, key: table, columns: [source, destination])
                    for target in targets {
                        try run(
                            statement, [.integer(row.primaryKey), .integer(target)], member: member.path, lineNumber: lineNumber,
                            primaryKey: String(row.primaryKey))
                    }
                case .destinationColumn(let table, let column):
                    let group = DestinationLinkGroup(table: table, column: column)
                    if bindsLinksOnInsert { linkCounts[group, default: 0] += targets.count }
                    if try holdsLinks(linePlan, toMany: index, group: group, source: row.primaryKey, targets: targets) { continue }
                    // The names' bytes made once for the record's links, not for each link.
                    var arguments: [StoredValue] = [
                        .text(Data(table.utf8)), .text(Data(column.utf8)), .null, .integer(row.primaryKey),
                        .text(Data(linePlan.plan.name.utf8)), .text(Data(link.name.utf8)),
                    ]
                    let insert = try linkInsert()
                    for target in targets {
                        arguments[2] = .integer(target)
                        try ExactSQL.execute(insert, arguments)
                    }
                }
            }
        }

        /// Compares a member's first line with its row, just inserted, encoded as an export
        /// writes it (`firstLinesAreAsExported`, which takes the answer where this row keeps the
        /// entity's lowest key). Only for an entity without to-manys, whose line is made of its
        /// own row alone, and that is the member's: the row is then the entity's only one so
        /// far, and its encoding cheap. An encoding that fails leaves the entity to be compared
        /// after the records, as before (where its error, if any, is thrown in its turn).
        mutating func noteFirstRecord(plan: ModelLayout.EntityPlan, member: String, key: Int64, line: Data) {
            guard plan.toMany.isEmpty, plan.name == member, firstRecords[member] == nil,
                let encoded = try? restore.firstRecordLine(db, plan: plan)
            else { return }
            firstRecords[member] = (key, StatementRestore.isLine(encoded, line))
        }

        /// Notes the rows of a batch of decoded lines that `insert` will insert (the rows it
        /// reaches `insertRow` with), in their order, before the batch's first insert: the notes
        /// in two steps (`InsertedValues.note`, `flush`) end as if each row had been observed
        /// just before its insert. A row noted after one whose insert fails is never inserted,
        /// but that failure ends the restore (a row a constraint refuses makes every answer
        /// "may", `refusedRow`), so no answer is read from such notes.
        mutating func noteDecoded(_ lines: [RecordLine], members: [ArchiveManifest.EntityMember]) {
            guard let inserted else { return }
            for line in lines {
                guard case .decoded(let decoded) = line.content, decoded.hasEntity, decoded.hasPlan, let row = decoded.row,
                    let target = linePlan(of: members[line.member])
                else { continue }
                inserted.note(row.values, primaryKey: row.primaryKey, plan: target.plan)
            }
            inserted.flush()
        }

        /// The plan of a model archive's `member`, its entity's in the archive's model, looked up
        /// once for a member's lines: for each line, taking the layout (a struct of arrays and
        /// dictionaries) and scanning its entities by name copied the plan found, each of its
        /// strings and arrays retained and released, on the transaction's thread. Kept only once
        /// found (with the layout made): a member whose entity the model lacks throws at each
        /// line, as before, and the layout is made at the first record's line, as before.
        mutating func modelPlan(of member: ArchiveManifest.EntityMember, files: [String: Data], lineNumber: Int) throws -> LinePlan {
            if let last = lastModelPlan, last.member == member.name { return last.plan }
            let layout = try modelLayout(files: files, member: member.path)
            guard let plan = layout.entity(named: member.name) else {
                throw restore.invalid(member.path, lineNumber, "entity \(member.name) is not part of the archive's model")
            }
            let made = LinePlan(plan)
            lastModelPlan = (member.name, made)
            return made
        }

        /// The plan `LegacyArchive.decode` gives each line of `member` (that of
        /// `lineColumns.entities[member.name]`), looked up once for a member's lines.
        mutating func linePlan(of member: ArchiveManifest.EntityMember) -> LinePlan? {
            if let last = lastLinePlan, last.member == member.name { return last.plan }
            let plan = lineColumns?.entities[member.name]?.plan.map(LinePlan.init)
            lastLinePlan = (member.name, plan)
            return plan
        }

        /// A plan held by reference: the inserts read it without a copy (a copy retained its
        /// strings and arrays for each row). Passed on as the class, not as `plan`: handed to a
        /// function as a `ModelLayout.EntityPlan`, it was copied for each row all the same.
        final class LinePlan {
            let plan: ModelLayout.EntityPlan
            init(_ plan: ModelLayout.EntityPlan) { self.plan = plan }

            /// `inserted.observe` of `row`, with the plan passed from here: passed from the
            /// inserter (`linePlan.plan`), it was copied for each row all the same.
            func observe(_ row: ModelMemberEncoding.Row, in inserted: InsertedValues) {
                inserted.observe(row.values, primaryKey: row.primaryKey, plan: plan)
            }
        }

        /// What `plan`'s rows take as they are inserted: nil when its table keeps no link, or
        /// none that a row can take without changing what an insert may refuse.
        mutating func linkBinding(of target: LinePlan) throws -> DestinationLinkBinding? {
            if let last = lastLinkBinding, last.entity == target.plan.name { return last.binding }
            let plan = target.plan
            var binding = linkBindings[plan.name]
            if binding == nil, let layout {
                let insertColumns = CoreDataSQL.rowColumns + plan.fields.map(\.column) + plan.toOne.map(\.column)
                var groups: [DestinationLinkGroup] = []
                for source in layout.entities {
                    for link in source.toMany {
                        guard case .destinationColumn(let table, let column) = link.storage, table == plan.table else { continue }
                        let group = DestinationLinkGroup(table: table, column: column)
                        if !groups.contains(group) { groups.append(group) }
                    }
                }
                var cursors: [DestinationLinkCursor] = []
                for group in groups.sorted(by: { $0.column < $1.column }) where cursors.count < 32 {
                    guard try DestinationLinkBinding.takesLinksOnInsert(db, group, insertColumns: insertColumns) else { continue }
                    let cursor =
                        try linkCursors[group]
                        ?? pendingLinks.flatMap { $0.written ? nil : DestinationLinkCursor(group, held: $0.links(of: group)) }
                        ?? DestinationLinkCursor(db, group)
                    linkCursors[group] = cursor
                    cursors.append(cursor)
                }
                let made = DestinationLinkBinding(plan: plan, insertColumns: insertColumns, cursors: cursors)
                linkBindings[plan.name] = made
                binding = made
            }
            let taking = binding?.cursors.isEmpty == false ? binding : nil
            lastLinkBinding = (plan.name, taking)
            return taking
        }

        /// Ends the reading of links on insert: the groups whose every link a destination's row
        /// took (all of them, when nothing is left for the link step). None after a row was
        /// refused: a duplicate dropped by a uniqueness constraint moves links afterwards
        /// (`UniqueConstraintRule.repoint`), which the link step must then set.
        mutating func linkGroupsBoundOnInsert() throws -> DestinationLinkGroups {
            defer {
                // Their statements are reset: the link step changes, and the restore drops, the links' table.
                for cursor in linkCursors.values { cursor.close() }
                linkCursors = [:]
                linkBindings = [:]
                lastLinkBinding = nil
            }
            guard bindsLinksOnInsert, !refusedRow else {
                try writePendingLinks()
                return .none
            }
            let bound = Set(linkCounts.filter { group, count in linkCursors[group]?.bound == count }.keys)
            guard bound.count == linkCounts.count else {
                // The link step reads the table.
                try writePendingLinks()
                return .some(bound)
            }
            return .all
        }

        /// Inserts one record's row into its entity's table. A row a constraint refuses is a key
        /// that appears twice, or a duplicate (`duplicate`, the decoded row) by the model's
        /// uniqueness constraints, dropped for the record restored before it.
        mutating func insertRow(
            _ target: LinePlan, primaryKey: Int64, opt: Int64?, values: [StoredValue], duplicate: ModelMemberEncoding.Row?,
            member: String, lineNumber: Int
        ) throws {
            // Names of one plan share their storage: comparing them is comparing two words.
            if rowEntity?.name != target.plan.name {
                let plan = target.plan
                if let previous = rowEntity, let key = previous.largestKey {
                    earlierLargestKeys[previous.name] = max(earlierLargestKeys[previous.name] ?? 0, key)
                }
                if let previous = rowEntity, let key = previous.lowestKey {
                    earlierLowestKeys[previous.name] = min(earlierLowestKeys[previous.name] ?? key, key)
                }
                let insert =
                    try statements[plan.name]?.insert
                    ?? statement(
                        plan.table, key: plan.name, columns: CoreDataSQL.rowColumns + plan.fields.map(\.column) + plan.toOne.map(\.column))
                rowEntity = (plan.name, insert, nil, nil)
            }
            guard var insert = rowEntity?.insert else { preconditionFailure("the row's entity was made current above") }
            rowArguments.removeAll(keepingCapacity: true)
            rowArguments.append(.integer(primaryKey))
            rowArguments.append(.integer(target.plan.number))
            rowArguments.append(opt.map { .integer($0) } ?? .null)
            rowLinkSources.removeAll(keepingCapacity: true)
            // The links the row takes as it goes in (bits of `binding.cursors`), their sources after its values.
            var linksTaken = 0
            let binding = bindsLinksOnInsert ? try linkBinding(of: target) : nil
            if let binding {
                for (index, cursor) in binding.cursors.enumerated() {
                    guard let source = try cursor.source(linkingTo: primaryKey) else { continue }
                    linksTaken |= 1 << index
                    rowLinkSources.append(.integer(source))
                }
                if linksTaken != 0 { insert = try binding.insert(taking: linksTaken, db: db) }
            }
            do {
                try ExactSQL.execute(insert, rowArguments, values, rowLinkSources)
                if let binding, linksTaken != 0 {
                    binding.stored(linksTaken)
                    linksTakenOnInsert += linksTaken.nonzeroBitCount
                }
                FaultPoint.reached("inserted \(target.plan.name) \(primaryKey)")
                let largest = max(rowEntity?.largestKey ?? 0, primaryKey)
                rowEntity?.largestKey = largest
                let lowest = min(rowEntity?.lowestKey ?? primaryKey, primaryKey)
                rowEntity?.lowestKey = lowest
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                let plan = target.plan
                refusedRow = true
                // Dropping a duplicate moves its links in the table.
                try writePendingLinks()
                if try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM \(plan.table) WHERE \(CoreDataSQL.keyColumn) = ?", arguments: [primaryKey]) != 0
                {
                    throw restore.invalid(member, lineNumber, "\(RecordJSON.primaryKeyKey) \(primaryKey) appears more than once")
                }
                // A record the model's uniqueness constraint refuses is a duplicate of one restored before.
                guard let context, let row = duplicate,
                    let (keeper, _) = try UniqueConstraintRule.keeper(of: row, plan: plan, context: context)
                else {
                    throw restore.invalid(
                        member, lineNumber, "record \(primaryKey) cannot be stored: \(error.message ?? "a constraint fails")")
                }
                try UniqueConstraintRule.drop(row, keeper: keeper, plan: plan, context: context)
            }
        }

        mutating func insertGeneric(line: Data, member: ArchiveManifest.EntityMember, lineNumber: Int) throws {
            let table = CompiledEntity.tableName(member.name)
            guard try db.tableExists(table) else {
                throw restore.invalid(member.path, lineNumber, "the archive's statements make no table \(table) for entity \(member.name)")
            }
            let members: [(key: String, value: JSONValue)]
            do {
                members = try JSONLine.parseObject(line)
            } catch let error as JSONLine.SyntaxError {
                throw restore.invalid(member.path, lineNumber, error.lineReason)
            }
            if genericColumns[table] == nil {
                let info = try db.columns(in: table)
                let primaryKey = info.filter { $0.name.uppercased() == CoreDataSQL.keyColumn }
                let others = info.filter { $0.name.uppercased() != CoreDataSQL.keyColumn }
                genericColumns[table] = (others.map(\.name), (primaryKey + others).map { ColumnAffinity(declaredType: $0.type) })
            }
            guard let (columns, affinities) = genericColumns[table] else { return }
            guard members.map(\.key) == [RecordJSON.primaryKeyKey] + columns, affinities.count == members.count else {
                throw restore.invalid(
                    member.path, lineNumber, "the record's keys are not _pk and the table's columns (\(columns.joined(separator: ", ")))")
            }
            let values: [StoredValue] = try zip(members, affinities).map { item, affinity in
                do {
                    return try TableMemberEncoding.value(item.value, affinity: affinity, in: db)
                } catch let mismatch as TableMemberEncoding.Mismatch {
                    throw restore.invalid(member.path, lineNumber, "\(item.key) holds \(mismatch.found)")
                }
            }
            // Z_PK in its storage class, as every other column: another tool may have re-created
            // the table with an untyped Z_PK that holds TEXT.
            let insert = try statement(table, key: table, columns: [CoreDataSQL.keyColumn] + columns)
            try run(
                insert, values, member: member.path, lineNumber: lineNumber,
                primaryKey: {
                    if case .integer(let number) = values[0] { return String(number) }
                    return values[0].summary
                }())
        }

        /// Holds a record's links of its `toMany`th to-many in `pendingLinks`; false when they go to
        /// the table (too many to hold: the links held so far are written there first, in their order).
        mutating func holdsLinks(
            _ target: LinePlan, toMany index: Int, group: DestinationLinkGroup, source: Int64, targets: [Int64]
        ) throws -> Bool {
            guard let pendingLinks, !pendingLinks.written else { return false }
            if lastLinkKinds?.entity != target.plan.name {
                lastLinkKinds = (target.plan.name, Array(repeating: -1, count: target.plan.toMany.count))
            }
            if lastLinkKinds!.numbers[index] < 0 {
                let kind = PendingLinks.Kind(group: group, entity: target.plan.name, relationship: target.plan.toMany[index].name)
                lastLinkKinds!.numbers[index] = pendingLinks.number(of: kind)
            }
            if pendingLinks.hold(kind: lastLinkKinds!.numbers[index], source: source, targets: targets) { return true }
            try writePendingLinks()
            return false
        }

        /// The links held so far into `temp.questbak_links`, before anything reads or changes it.
        mutating func writePendingLinks() throws {
            guard let pendingLinks, !pendingLinks.written else { return }
            try pendingLinks.write(through: try linkInsert())
        }

        /// The insert of one link kept on its destination's row, prepared once: made for each link,
        /// its preparing took a fifth of another app's restore (one link a step of a recipe).
        mutating func linkInsert() throws -> Statement {
            if let linkInsertStatement { return linkInsertStatement }
            let made = try db.makeStatement(sql: "INSERT INTO temp.questbak_links VALUES (?, ?, ?, ?, ?, ?)")
            linkInsertStatement = made
            return made
        }

        mutating func statement(_ table: String, key: String, columns: [String]) throws -> Statement {
            if let cached = statements[key] { return cached.insert }
            let quoted = columns.map(\.quotedSQLIdentifier).joined(separator: ", ")
            let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
            let insert = try db.makeStatement(sql: "INSERT INTO \(table.quotedSQLIdentifier) (\(quoted)) VALUES (\(placeholders))")
            statements[key] = (insert, columns)
            return insert
        }

        func run(
            _ statement: Statement, _ values: [StoredValue], member: String, lineNumber: Int, primaryKey: @autoclosure () -> String
        ) throws {
            do {
                try ExactSQL.execute(statement, values)
            } catch let error as DatabaseError where [.SQLITE_CONSTRAINT, .SQLITE_MISMATCH].contains(error.resultCode) {
                // A constraint, or a value an INTEGER PRIMARY KEY cannot be: the archive's line.
                throw restore.invalid(
                    member, lineNumber, "record \(primaryKey()) cannot be stored: \(error.message ?? "a constraint fails")")
            }
        }

        /// A missing member is not an empty entity: every entity of the model (or every entity
        /// table, for a generic archive) has one.
        mutating func checkEveryEntityListed(files: [String: Data]) throws {
            let listed = Set(restore.manifest.entities.map(\.name))
            let expected: [String]
            if restore.isModel {
                expected = try modelLayout(files: files, member: ArchiveManifest.modelCachePath).entities.map(\.name)
            } else {
                expected = try StoreReader.modelTables(db).map(\.entity.name)
            }
            if let missing = expected.first(where: { !listed.contains($0) }) {
                throw ImportError.notImportable(
                    archive: restore.archive,
                    reason: "its manifest lists no member for entity \(missing) (an empty entity is listed with count 0)")
            }
            if let extra = listed.subtracting(expected).sorted().first {
                throw ImportError.notImportable(archive: restore.archive, reason: "entity \(extra) is not part of the archived store")
            }
        }
    }

    /// Reads the closed store back: its statements are the ones `write` made, it passes
    /// `integrity_check`, and every member (entities, tables, metadata, model cache) is what
    /// `write` says it wrote (the manifest's, unless repairs changed the records or a format 1 or 2
    /// archive was restored), byte for byte. Returns the records of each entity.
    ///
    /// The file is closed and nothing writes it, so the reads need not follow one another: the
    /// `integrity_check` runs on a connection and thread of its own while the rest is read, and
    /// large entities described by a model (a format 1 or 2 archive's schema, or a format 3
    /// archive's own model) are encoded in ranges of keys on `readers` more connections (`ModelMemberEncoding.encode`: the same bytes in the same order, so the same
    /// digests). *Why the outcome is the same:* every check still runs on the same file, and the
    /// first failure in the order the checks were made is the one thrown: the integrity check's
    /// (its error or its "damage") is waited for and thrown before anything the other reads
    /// found. SQLite reads a damaged file without harm (it returns an error), so reading the rest
    /// of one meanwhile changes nothing but the time. `ReadBackTests` compares both ways.
    func verifyReadBack(_ url: URL, written: Written, readers: Int = 0, rowsPerRange: Int = 2048) throws -> [String: Int] {
        let queue = try DatabaseQueue(path: url.path, configuration: StoreReader.besideConfiguration(readonly: true))
        defer { try? queue.close() }
        let path = url.path
        let integrity = BackgroundResult { try StoreReader.passesIntegrityCheck(path: path) }
        let rest = Result {
            let rangeReaders =
                (legacy != nil || isModel) && readers > 0
                ? try KeyRangeReaders.open(path: url.path, count: readers, rowsPerRange: rowsPerRange) : nil
            defer { for connection in rangeReaders?.connections ?? [] { try? connection.close() } }
            return try queue.read { try verifyReadBackRest($0, url, written: written, readers: rangeReaders) }
        }
        guard try integrity.value() else {
            throw ImportError.verificationFailed(store: url.path, entity: "(file)", expected: "integrity_check ok", found: "damage")
        }
        return try rest.get()
    }

    /// Every check of `verifyReadBack` after `integrity_check`, in their order.
    private func verifyReadBackRest(_ db: Database, _ url: URL, written: Written, readers: KeyRangeReaders?) throws -> [String: Int] {
        let digests = written.digests
        let expectedFiles = written.files
        func fail(_ what: String, expected: String, found: String) -> ImportError {
            ImportError.verificationFailed(store: url.path, entity: what, expected: expected, found: found)
        }
        guard try CoreDataSQL.schemaStatements(db) == written.statements else {
            throw fail("(statements)", expected: "the \(written.statements.count) statements written", found: "others")
        }
        if let settings = manifest.sqlite {
            let found = try StoreFileSettings.of(db)
            guard found == settings else { throw fail("(file)", expected: settings.summary, found: found.summary) }
        }
        let layout: ModelLayout?
        if let legacy {
            do {
                layout = try legacy.layout(db, archive: archive)
            } catch {
                throw fail(
                    "(model)", expected: "schema \(legacy.schemaVersion)",
                    found: (error as? LocalizedError)?.errorDescription ?? "\(error)")
            }
        } else if isModel {
            do {
                let cache = try StoreReader.modelCache(db) ?? Data()
                // Its row checks (a count a table and a link) on the range readers at once, read
                // back in their order (`ModelLayout.Builder.checkRows`): on this thread alone they
                // were a twentieth of the proof's instructions, before any member was encoded.
                layout = try ModelLayout(
                    db, model: try ModelCacheDecoder.decode(cache), carriedAsTables: carriedTableNames, readers: readers)
            } catch {
                throw fail(
                    "(model)", expected: "the archive's model", found: (error as? LocalizedError)?.errorDescription ?? "\(error)")
            }
            if let problem = layout?.problems.first { throw fail("(model)", expected: "the model explains the store", found: problem) }
        } else {
            layout = nil
        }
        let found = try self.digests(db, layout: layout, path: url.path, readers: readers)
        var counts: [String: Int] = [:]
        for name in entityNames {
            guard let digest = found[name], let wanted = digests[name], digest == wanted else {
                if written.digestsAreTheArchives { throw NotAsExported() }
                let expected = digests[name].map { "\($0.count) records \($0.sha256)" } ?? "a member"
                throw fail(name, expected: expected, found: found[name].map { "\($0.count) records \($0.sha256)" } ?? "none")
            }
            counts[name] = digest.count
        }
        try CarriedTables(archive: archive, tables: manifest.tables ?? [], createsTables: false).verify(db, store: url.path)
        // Core Data's one metadata row and one cache row, exactly as archived (when carried
        // as rows, their members' digests above say so).
        if !carriedTableNames.contains(CoreDataSQL.metadataTable) {
            let metadataRows = try ExactSQL.fetchAll(db, sql: "SELECT Z_VERSION, Z_UUID FROM \(CoreDataSQL.metadataTable)")
            let uuid: StoredValue = manifest.source.storeUUID.isEmpty ? .null : .text(Data(manifest.source.storeUUID.utf8))
            guard metadataRows.count == 1, metadataRows.first?[1] == uuid else {
                throw fail(
                    CoreDataSQL.metadataTable, expected: "one row, Z_UUID \(manifest.source.storeUUID)",
                    found: "\(metadataRows.count) rows")
            }
        }
        if !carriedTableNames.contains(CoreDataSQL.modelCacheTable) {
            let cacheRows =
                try db.tableExists(CoreDataSQL.modelCacheTable)
                ? try Int.fetchOne(db, sql: "SELECT count(*) FROM \(CoreDataSQL.modelCacheTable)") ?? 0 : 0
            let cacheExpected = expectedFiles[ArchiveManifest.modelCachePath] == nil ? 0 : 1
            guard cacheRows == cacheExpected else {
                throw fail(CoreDataSQL.modelCacheTable, expected: "\(cacheExpected) row(s)", found: "\(cacheRows)")
            }
        }
        let files = [
            ArchiveManifest.metadataPath: try Data.fetchOne(db, sql: CoreDataSQL.selectMetadataPlist),
            ArchiveManifest.modelCachePath: try StoreReader.modelCache(db),
        ]
        for (path, digest) in expectedFiles.sorted(by: { $0.key < $1.key }) where !path.hasPrefix(ExternalStorage.memberPrefix) {
            let actual = files[path].flatMap { $0 }.map { SHA256.hash(data: $0).hexString }
            guard actual == digest else { throw fail(path, expected: "sha256 \(digest)", found: actual ?? "nothing") }
        }
        // Every table is accounted for: an entity's, a carried one, a join table the records
        // fill, Core Data's bookkeeping, or its history and mirroring, which start empty.
        let entityTables = Set(layout?.entities.map(\.table) ?? entityNames.map { CompiledEntity.tableName($0) })
        let accounted = entityTables.union(carriedTableNames).union(layout?.joinTables ?? []).union(replayed.virtualTables).union(
            CoreDataSQL.bookkeepingTables)
        for table in try String.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        where !accounted.contains(table) {
            guard CoreDataSQL.isHistoryOrMirroringTable(table), try StoreReader.rowCount(db, table: table) == 0 else {
                throw fail(
                    "table \(table)", expected: "a table the archive fills or names", found: "one its statements make and nothing fills"
                )
            }
        }
        return counts
    }
}
