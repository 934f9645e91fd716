import CoreDataStore
import Crypto
import Foundation
import GRDB
import QuestBakArchive

/// Why two inputs cannot be compared.
package enum DiffError: Error, Equatable, LocalizedError {
    /// The two inputs have no entity in common (SameApp): no record of one can be the other's.
    case notTheSameApp(a: String, b: String, entitiesA: [String], entitiesB: [String])

    /// The sentence that says why, naming both inputs.
    public var errorDescription: String? {
        switch self {
        case .notTheSameApp(let a, let b, let entitiesA, let entitiesB):
            return SameApp.difference((a, entitiesA), (b, entitiesB)) + "; diff compares two stores or archives of one app"
        }
    }
}

/// `questbak diff A B`: what differs between two stores or archives of one app, record by record.
/// Each side is read as an archive writes it (a store's record lines as its export encodes them), and
/// records are recognised as a merge recognises them (MergeLayout), never by `Z_PK`, which differs
/// between devices: the same well-formed `cloudID` that no other record of its side shares, else a
/// uniqueness constraint of the model, else the app profile's natural key, else for a singleton the
/// one record, else every value equal. Keys are tried in that order, each on the records the ones
/// before it left unmatched, and a relationship compares the records it names, not their `_pk`s
/// (parents are matched before their children). A property only one side's records have (one a
/// migration added) is named as such, not counted as a change. Two inputs of different apps are
/// refused; a model archive and a generic one are compared by table and column.
/// Records are kept in a scratch SQLite store in the work folder, never in memory.
package enum Differ {
    /// What differs, entity by entity and record by record (the API's names are public).
    package typealias FieldChange = QuestBak.DiffResult.FieldChange
    package typealias Changed = QuestBak.DiffResult.Changed
    package typealias EntityDiff = QuestBak.DiffResult.Entity
    package typealias Result = QuestBak.DiffResult
    package typealias Line = QuestBak.DiffResult.Line

    /// The counts, and each entity's records read one at a time from the scratch store: the
    /// listing of a million changes is never held in memory. Valid only inside `diff`'s `read`.
    package final class Listing {
        package let result: Result
        private let comparisons: [String: Comparison]
        private let keyMap: KeyMap
        private let thin: ThinTables?
        /// B was a store of A's bytes or content, not read (tests check when `Shortcuts` spare it).
        let readBAsA: Bool
        /// The entities whose member each side has a digest of (tests check which a store's read hashes).
        let digested: (a: Set<String>, b: Set<String>)

        init(
            result: Result, comparisons: [String: Comparison], keyMap: KeyMap, thin: ThinTables?, readBAsA: Bool,
            digested: (a: Set<String>, b: Set<String>) = ([], [])
        ) {
            self.result = result
            self.comparisons = comparisons
            self.keyMap = keyMap
            self.thin = thin
            self.readBAsA = readBAsA
            self.digested = digested
        }

        /// The entities whose tables are still thin (tests check when `Shortcuts` spare their load).
        var thinEntities: Set<String> { thin?.entities ?? [] }

        /// The roots whose keys a statement looked up in `diff_map` (tests check when `Shortcuts`
        /// spare it).
        var rootsLookedUp: Set<String> { keyMap.filled }

        /// The keys not tried in SQL, as "entity: key" (tests check when `Shortcuts` spare them).
        var keysSkipped: Set<String> {
            Set(comparisons.values.flatMap { comparison in comparison.skipped.map { "\(comparison.name): \($0)" } })
        }

        /// The pairs written to `diff_pairs` (tests check when `Shortcuts` spare them).
        func pairsWritten() throws -> Int {
            guard let db = comparisons.values.first?.db else { return 0 }
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM diff_pairs") ?? 0
        }

        /// The records only B has, then those only A has (each by `_pk`), then the changed ones
        /// (by A's `_pk`).
        package func forEachLine(of entity: String, _ body: (Line) throws -> Void) throws {
            try comparisons[entity]?.forEachLine(body)
        }
    }

    /// The ways `diff` spares work whose outcome it knows, each of which a test turns off to
    /// compare the counts and the listing with those the work gives.
    package struct Shortcuts {
        /// `diff_map` is filled when a statement first reads it (`KeyMap`), not at once.
        package var fillsKeyMapWhenRead = true
        /// A twin whose every record its cloudID pairs with itself is counted so, its pairs not
        /// written to `diff_pairs` (`Comparison.pairsEveryRecordWithItself`).
        package var pairsIdentityByCount = true
        /// A store A's entity whose member B may hold byte for byte (B an archive with the same
        /// first line, or a store of the same bytes or content) is loaded thin (`ThinTables`), and
        /// whole only when a statement would read more of it; B a store of A's bytes or content
        /// (`StoreBytes`) is not read at all.
        package var loadsTwinsThin = true
        /// That count is decided from what the loader saw of the cloudIDs (`CloudIDCensus`) and at
        /// most one pass over their column, when that can decide it, instead of SQL's grouping.
        package var decidesIdentityFromLoad = true
        /// A cloudID key is not tried in SQL when the two sides' censuses show that no
        /// well-formed value of one is the other's (`CloudIDCensus.mayShareAValue`): it would
        /// pair nothing (a second device's store, whose every cloudID is its own).
        package var skipsCloudIDsNotShared = true

        package init() {}
    }

    /// What fills `diff_map`, root by root, in the order `diff` asks for it: a root's dangling
    /// keys, then each entity's matches as it is matched (each writes rows of its own root
    /// only). Kept until a statement that looks up a key of that root is about to run (`fill`),
    /// and run at once after that. A statement reads only the rows of the roots it names
    /// (`translated`'s `mp.root`), and each kept statement reads only the side tables and its
    /// own entity's pairs, which do not change between its being asked for and `fill` (an
    /// entity's pairs change only while it is matched, before it asks, and in the rounds, whose
    /// statements `fill` first); they run in the order asked. So the rows a statement reads are
    /// those it would read were each run when asked. A root nothing looks up (a twin's, when its
    /// records and those naming it all pair with themselves) is never filled.
    final class KeyMap {
        private var pending: [String: [() throws -> Void]] = [:]
        private(set) var filled: Set<String> = []
        /// Set by `fillAll`: every statement runs as it is asked for.
        private var runsAtOnce = false

        func add(root: String, _ statement: @escaping () throws -> Void) throws {
            if runsAtOnce || filled.contains(root) { try statement() } else { pending[root, default: []].append(statement) }
        }

        /// Runs what was kept for `roots`; called before every statement that may translate a
        /// key of B naming one of them.
        func fill<Roots: Sequence<String>>(_ roots: Roots) throws {
            for root in roots where !filled.contains(root) {
                filled.insert(root)
                let statements = pending.removeValue(forKey: root) ?? []
                for statement in statements { try statement() }
            }
        }

        /// Runs everything kept, and from now on each statement as it is asked for (as `diff`
        /// did before `Shortcuts.fillsKeyMapWhenRead`).
        func fillAll() throws {
            try fill(pending.keys.sorted())
            runsAtOnce = true
        }
    }

    /// `progress` is told how far the reading of each side is (step "read A", "read B"; a
    /// store's records are counted as its exporter's pass encodes them).
    /// `keys` open either side when it is an age-encrypted archive. `profiles` are the apps whose
    /// schemas a store or archive may be of (their natural keys recognise records). `read` is
    /// given the counts and the listing, while the scratch store that holds them exists.
    package static func diff<T>(
        _ a: URL, _ b: URL, keys: ArchiveKeys = ArchiveKeys(), profiles: [AppProfile] = [], workDirectory: URL,
        progress: ((RecordProgress) -> Void)? = nil, cancellation: Cancellation? = nil, comparesSelfPairsInSQL: Bool = false,
        shortcuts: Shortcuts = Shortcuts(), read: (Listing) throws -> T
    ) throws -> T {
        // Records live in a scratch store in the private work folder, not in memory: SQLite's
        // page cache is bounded and its sorts spill to files, so memory stays flat at any size.
        let scratch = workDirectory.appendingPathComponent("diff")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        let queue = try DatabaseQueue(path: scratch.appendingPathComponent("records.sqlite").path, configuration: configuration)
        return try queue.writeWithoutTransaction { db in
            // Nothing to recover: a failed diff throws the folder away.
            try db.execute(sql: "PRAGMA journal_mode = OFF")
            try db.execute(sql: "PRAGMA synchronous = OFF")
            try db.execute(sql: "PRAGMA temp_store = FILE")
            // A bound on memory, not a speed: with the exporter's range readers on a store side,
            // 8 MB here took a diff of two different stores to 67 MB at 100k and 1M estimations,
            // past the 64 MB every command is held to; 4 MB peaked at 58-60 MB and was no slower
            // (1M: 28.5 s with 8 MB, 26.8 s with 4 MB).
            try db.execute(sql: "PRAGMA cache_size = -4096")
            return try read(
                try diff(
                    a, b, keys: keys, profiles: profiles, workDirectory: workDirectory, db: db, progress: progress,
                    cancellation: cancellation, comparesSelfPairsInSQL: comparesSelfPairsInSQL, shortcuts: shortcuts))
        }
    }

    static func diff(
        _ a: URL, _ b: URL, keys: ArchiveKeys, profiles: [AppProfile], workDirectory: URL, db: Database,
        progress: ((RecordProgress) -> Void)?, cancellation: Cancellation?, comparesSelfPairsInSQL: Bool, shortcuts: Shortcuts
    ) throws -> Listing {
        // A store against an archive: the archive's members are read up to their first record
        // lines first, so that A's members that may be B's byte for byte are loaded thin.
        // Two stores of the same bytes, or of the same content (a store and the one its archive
        // restores): B is not read at all, its side is A's (`StoreBytes`).
        // A store against an archive: the archive is read on another thread meanwhile (`ArchiveAhead`).
        // Two stores of other content: which of their tables differ, a hint for their reads
        // (`StoreBytes.Verdict`, `tableDiffers`).
        var ahead: ArchiveAhead?
        var snapshots: (a: StoreSnapshot, b: StoreSnapshot)?
        var sameBytes = false
        var tablesDiffering: Set<String>?
        if shortcuts.loadsTwinsThin, shortcuts.pairsIdentityByCount, shortcuts.fillsKeyMapWhenRead, !comparesSelfPairsInSQL,
            FileKind.of(a.path) == .sqliteStore
        {
            if FileKind.of(b.path) != .sqliteStore {
                ahead = ArchiveAhead(b, keys: keys)
            } else if let left = try? StoreSnapshot(storeAt: a), let right = try? StoreSnapshot(storeAt: b) {
                // (A store that cannot be opened is left to the reads below, which say why in order.)
                snapshots = (left, right)
                let verdict = try StoreBytes.compare(left, right, cancellation: cancellation)
                sameBytes = verdict.isSame
                tablesDiffering = verdict.tablesDiffering
            }
        }
        var left: Side
        do {
            left = try side(
                of: a, keys: keys, profiles: profiles, workDirectory: workDirectory, label: "a", expected: { ahead?.expected($0) },
                thinAll: sameBytes, differs: { tableDiffers($0, in: tablesDiffering) }, snapshot: snapshots?.a, db: db, progress: progress,
                cancellation: cancellation)
        } catch {
            _ = ahead?.finish(stop: true)
            throw error
        }
        var right: Side
        if sameBytes {
            // B's records are A's, read once.
            right = left
            try reportReadAtOnce(right, progress: progress, cancellation: cancellation)
        } else if let read = ahead?.finish(), let whole = side(from: read, twin: left, profiles: profiles) {
            // B read ahead, and every member of it A's: reading it again would load nothing.
            right = whole
            try reportReadAtOnce(right, progress: progress, cancellation: cancellation)
        } else {
            right = try side(
                of: b, keys: keys, profiles: profiles, workDirectory: workDirectory, label: "b", twin: left,
                differs: { tableDiffers($0, in: tablesDiffering) }, snapshot: snapshots?.b, db: db, progress: progress,
                cancellation: cancellation)
        }
        // Their copies go now, as each went after its read before.
        snapshots = nil
        guard SameApp.check(left.entityNames, right.entityNames) else {
            throw DiffError.notTheSameApp(a: a.path, b: b.path, entitiesA: left.entityNames, entitiesB: right.entityNames)
        }
        // A model archive names properties, a generic one columns: both are compared by their tables.
        let generic = ArchiveManifest.Source.genericSchema
        let byTables = Set([left.kind, right.kind]) == [ArchiveManifest.Source.modelSchema, generic]
        if byTables {
            if left.kind != generic {
                left = try side(
                    of: a, keys: keys, profiles: profiles, workDirectory: workDirectory, label: "a", byTables: true, db: db,
                    progress: progress, cancellation: cancellation)
            }
            if right.kind != generic {
                right = try side(
                    of: b, keys: keys, profiles: profiles, workDirectory: workDirectory, label: "b", byTables: true, twin: left,
                    db: db, progress: progress, cancellation: cancellation)
            }
        }
        try db.execute(
            sql: """
                CREATE TABLE diff_pairs (entity INTEGER NOT NULL, a INTEGER NOT NULL, b INTEGER NOT NULL);
                CREATE INDEX diff_pairs_a ON diff_pairs (entity, a);
                CREATE INDEX diff_pairs_b ON diff_pairs (entity, b);
                CREATE TABLE diff_map (root TEXT NOT NULL, b INTEGER NOT NULL, a INTEGER, PRIMARY KEY (root, b)) WITHOUT ROWID;
                CREATE TABLE diff_changed (entity INTEGER NOT NULL, a INTEGER NOT NULL, b INTEGER NOT NULL);
                CREATE TABLE diff_key_pairs (a INTEGER PRIMARY KEY, b INTEGER NOT NULL);
                """)
        // Parents are matched before the children whose relationships name them; changes are
        // looked for once every entity is matched, so a to-many compares the records it names too.
        var comparisons: [String: Comparison] = [:]
        let names = order(Set(left.tables.keys).union(right.tables.keys), left, right)
        let plans = names.map { plan(for: $0, left, right, byTables: byTables || left.kind == generic) }
        // Only the records of an entity some relationship names are looked up in `diff_map`, and
        // only through a relationship both sides' records have: a field is compared, and part of
        // a key, only when both have it (`shared`), and `value` translates no other. (TimeQuest's
        // GameSession names its estimations by a to-many no record line holds.)
        let named = Set(
            names.indices.flatMap { index in
                plans[index].references.filter { field, _ in
                    left.tables[names[index]]?.columns[field] != nil && right.tables[names[index]]?.columns[field] != nil
                }.values
            })
        // `diff_map` is filled when a statement first looks a key up in it, not before: a twin
        // whose every record is paired with itself needs none of it (see `KeyMap`).
        let keyMap = KeyMap()
        try mapDanglingKeys(of: named, names: names, plans: plans, left, right, into: keyMap, db: db)
        if !shortcuts.fillsKeyMapWhenRead { try keyMap.fillAll() }
        let models = models(left, right)
        let lineages = names.map { lineage(of: $0, in: models) }
        for (number, name) in names.enumerated() {
            // A to-one to records not all matched yet (the entity itself or one after it, or a
            // sub-entity of it: two entities that name each other, a record that names another of
            // its own entity) cannot be looked up while this entity is matched. (A to-many is no
            // part of a content key.)
            let unmatched = lineages[number...]
            var comparison = Comparison(
                db: db, number: number, name: name, plan: plans[number], isNamed: named.contains(plans[number].root), keyMap: keyMap,
                pairsIdentityByCount: shortcuts.pairsIdentityByCount, decidesIdentityFromLoad: shortcuts.decidesIdentityFromLoad,
                skipsCloudIDsNotShared: shortcuts.skipsCloudIDsNotShared,
                makeWhole: { [thin = left.thin] in try thin?.makeWhole([name]) },
                deferred: Set(
                    plans[number].destinations.filter { field, destination in
                        !plans[number].toMany.contains(field) && unmatched.contains { $0.contains(destination) }
                    }.keys),
                a: try left.tables[name] ?? Table.empty(in: db, name: "a_none_\(number)"),
                b: try right.tables[name] ?? Table.empty(in: db, name: "b_none_\(number)"))
            try comparison.match()
            comparisons[name] = comparison
        }
        // Where a relationship was deferred, what the first pass left is paired now, each round
        // with the first of these that pairs anything: by every value and to-one, as each pairing
        // lets more relationships be looked up; by the values alone where they are unique on both
        // sides; last, by the values without the deferred relationships, equal ones in `_pk`
        // order (records alike in all of that are told apart by nothing this compares). Each
        // round pairs a record or ends, so it ends.
        if comparisons.values.contains(where: { !$0.deferred.isEmpty }) {
            let referring = names.filter { comparisons[$0]?.plan.references.isEmpty == false }
            let deferring = names.filter { comparisons[$0]?.deferred.isEmpty == false }
            rounds: while true {
                for (entities, fields, uniqueOnly) in [
                    (referring, Comparison.ContentFields.all, false), (referring, .valuesOnly, true), (deferring, .withoutDeferred, false),
                ] {
                    var paired = 0
                    for name in entities {
                        let added = try comparisons[name]?.pairByContent(fields, uniqueOnly: uniqueOnly) ?? 0
                        if added > 0 { try comparisons[name]?.recordMatches() }
                        paired += added
                    }
                    if paired > 0 { continue rounds }
                }
                break
            }
        }
        try db.execute(sql: "CREATE INDEX diff_changed_entity ON diff_changed (entity)")
        // The roots (tables) each of whose records, of every entity on both sides, is paired with
        // itself: a relationship to one of them names, on B, exactly the record it names on A.
        let identicalRoots = Set(plans.map(\.root)).filter { root in
            names.indices.allSatisfy { plans[$0].root != root || comparisons[names[$0]]?.isIdentity == true }
        }
        // The records compared are read whole: their tables loaded whole at once, in one pass.
        try left.thin?.makeWhole(
            Set(
                comparisons.values.filter {
                    $0.comparesRecords(identicalRoots: identicalRoots, comparesSelfPairsInSQL: comparesSelfPairsInSQL)
                }.map(\.name)))
        let entities = try comparisons.values.map {
            try $0.summary(identicalRoots: identicalRoots, comparesSelfPairsInSQL: comparesSelfPairsInSQL)
        }.sorted { $0.name < $1.name }
        return Listing(
            result: Result(
                a: a, b: b, comparedBy: byTables ? "tables" : "records", entities: entities,
                added: entities.map(\.added).reduce(0, +), removed: entities.map(\.removed).reduce(0, +),
                changed: entities.map(\.changed).reduce(0, +)),
            comparisons: comparisons, keyMap: keyMap, thin: left.thin, readBAsA: sameBytes,
            digested: (Set(left.digests.keys), Set(right.digests.keys)))
    }

    /// A to-one that names no record of its own side (an orphan, which `import --validate` would
    /// report) names the same nothing as a to-one on the other side naming no record by the same
    /// key: each such key is mapped to itself, so that a store and its own backup agree on it.
    /// A key naming no record on one side only stays unmatched, and so differs. (Kept by
    /// `keyMap`, root by root, until a statement looks a key of that root up.)
    static func mapDanglingKeys(
        of roots: Set<String>, names: [String], plans: [Plan], _ left: Side, _ right: Side, into keyMap: KeyMap, db: Database
    ) throws {
        // The entities whose tables a root's statement reads (their rows: a thin table is loaded
        // whole first; B's tables are A's twins' or loaded whole).
        var reading: [String: Set<String>] = [:]
        func dangling(_ side: Side, root: String) -> String? {
            var referenced: [String] = []
            var existing: [String] = []
            for (index, name) in names.enumerated() {
                guard let table = side.tables[name] else { continue }
                if plans[index].root == root {
                    existing.append("SELECT pk FROM \(table.name)")
                    reading[root, default: []].insert(name)
                }
                for (field, target) in plans[index].references where target == root && !plans[index].toMany.contains(field) {
                    guard let column = table.columns[field] else { continue }
                    referenced.append("SELECT \(column) AS k FROM \(table.name) WHERE typeof(\(column)) = 'integer'")
                    reading[root, default: []].insert(name)
                }
            }
            guard !referenced.isEmpty else { return nil }
            return referenced.joined(separator: " UNION ") + (existing.isEmpty ? "" : " EXCEPT " + existing.joined(separator: " EXCEPT "))
        }
        for root in roots.sorted() {
            guard let a = dangling(left, root: root), let b = dangling(right, root: root) else { continue }
            // The same query of the same tables (twins) is its own intersection: run once, its
            // keys made distinct as INTERSECT makes them.
            let keys = a == b ? "SELECT DISTINCT k FROM (\(a))" : "SELECT k FROM (\(a)) INTERSECT SELECT k FROM (\(b))"
            try keyMap.add(root: root) { [involved = reading[root] ?? []] in
                try left.thin?.makeWhole(involved)
                try db.execute(sql: "INSERT INTO diff_map (root, b, a) SELECT ?, k, k FROM (\(keys))", arguments: [root])
            }
        }
    }

    /// An entity member another side may hold byte for byte: its SHA-256 as the manifest lists
    /// it, and its first record line.
    struct Expected {
        var sha256: String
        var firstLine: [UInt8]
    }

    /// Whether the comparison of two stores' tables (`StoreBytes.Verdict`) found that the table
    /// of `entity`'s member differs (Core Data's table of an entity that is its table's root: `Z`
    /// and its name in capitals). A hint for the reads, never a proof: such a member is not
    /// hashed, and B's is loaded at once rather than hashed first (`side(ofStore:)`), for its
    /// lines are almost surely not the other's. When they are after all (the table differs only
    /// in what the member does not hold, such as another sub-entity's rows), the member is
    /// loaded whole on both sides and matched as any two members are, record by record, as a
    /// member whose first line differed always was: the listing is the same, only slower.
    static func tableDiffers(_ entity: String, in tablesDiffering: Set<String>?) -> Bool {
        tablesDiffering?.contains("Z" + entity.uppercased()) == true
    }

    /// B's side as `side(of:)` makes it of an archive every member of which is `twin`'s (the
    /// same SHA-256, checked as it was read, and a table) or holds no record: its manifest's
    /// names, digests and counts, its first lines, `twin`'s tables, its model. Nil when a
    /// member would be loaded.
    static func side(from read: ArchiveAhead.Read, twin: Side, profiles: [AppProfile]) -> Side? {
        let manifest = read.manifest
        let twins = manifest.entities.filter { twin.digests[$0.name] == $0.sha256 && twin.tables[$0.name] != nil }.map(\.name)
        guard manifest.entities.allSatisfy({ $0.count == 0 || twins.contains($0.name) }) else { return nil }
        var side = Side(kind: manifest.source.schema, entityNames: manifest.entities.map(\.name))
        side.digests = Dictionary(manifest.entities.map { ($0.name, $0.sha256) }, uniquingKeysWith: { first, _ in first })
        side.counts = Dictionary(manifest.entities.map { ($0.name, $0.count) }, uniquingKeysWith: +)
        side.firstLines = read.firstLines
        for name in twins { side.tables[name] = twin.tables[name] }
        if side.kind == ArchiveManifest.Source.knownSchema {
            side.model = profiles.lazy.compactMap { $0.version(manifest.effectiveSchemaVersion) }.first
        } else if side.kind == ArchiveManifest.Source.modelSchema, let modelCache = read.modelCache {
            side.model = (try? ModelCacheDecoder.decode(modelCache)).map { ModelVersion(compiled: $0) }
        }
        return side
    }

    /// A side not read record by record (its records are another's) reported read, entity by
    /// entity, at once (step "read B").
    static func reportReadAtOnce(_ side: Side, progress: ((RecordProgress) -> Void)?, cancellation: Cancellation?) throws {
        let counter = RecordProgressCounter(report: progress, totals: side.counts, step: "read B", cancellation: cancellation)
        for name in side.entityNames { try counter.count(name, by: side.counts[name] ?? 0) }
        counter.finishEntity()
    }

    /// A side's entities loaded thin (`Loader.thin`): their tables have their columns, count and
    /// census, and no row, which is all a twin's self-pairing reads when the census decides it.
    /// Every statement that reads the rows of such a table first has it loaded whole
    /// (`makeWhole`): the self-pairing when the census cannot decide it, any other key, the
    /// comparison of its records (see `Comparison.match` and `summary`), and what fills
    /// `diff_map` (`recordMatches`, `mapDanglingKeys`). A statement that reads none of its rows
    /// (`unmatched` is `0` once every record is paired with itself) is run on it as it is.
    final class ThinTables {
        private(set) var entities: Set<String>
        private let reload: (Set<String>) throws -> Void

        init(entities: Set<String>, reload: @escaping (Set<String>) throws -> Void) {
            self.entities = entities
            self.reload = reload
        }

        /// Loads `names`' tables whole where they are thin.
        func makeWhole(_ names: Set<String>) throws {
            let thin = names.intersection(entities)
            guard !thin.isEmpty else { return }
            entities.subtract(thin)
            try reload(thin)
        }
    }

    /// One input as an archive holds it: its records by entity, and what says how to recognise them.
    struct Side {
        var kind: String
        var entityNames: [String]
        /// Each entity's records, in the scratch store.
        var tables: [String: Table] = [:]
        /// Each entity member's SHA-256: an archive's as its manifest lists it and the read
        /// checked it; a store's only for the members that may be the other side's twins (the
        /// only digests compared).
        var digests: [String: String] = [:]
        /// Each entity member's records, as the manifest counts them.
        var counts: [String: Int] = [:]
        /// Each entity member's first record line (no newline): a store read after this side
        /// hashes a member without loading it only when its first line is this one (`side(ofStore:)`).
        var firstLines: [String: [UInt8]] = [:]
        /// The entities whose table has no row yet, only its columns, count and census (`Loader.thin`), and
        /// how to load them whole.
        var thin: ThinTables?
        /// The TimeQuest schema's version (its natural keys and singletons), or the store's own
        /// model; nil for a generic archive.
        var model: ModelVersion?
    }

    /// One side's records of one entity: a row each, `pk` its `_pk` (or the smallest integer when
    /// it has none), a flag per spelling of the cloudID (`w0`, `w1`: 1 where the record's value of
    /// it is a well-formed cloudID, checked once while loading rather than by a `GLOB` per record
    /// in each key table), a second flag per spelling (`s0`, `s1`: 1 where a record loaded before,
    /// on this side, may have had the same well-formed value, as `SharedValueFilter` says), then a
    /// column per property any of them has, holding `DiffValue`s.
    struct Table {
        var name: String
        /// Property → column.
        var columns: [String: String] = [:]
        var count = 0
        /// Per `flagged` property: what the loader saw of its well-formed values.
        var census = noCensus
        /// The census of a table nothing is loaded into yet.
        static var noCensus: [CloudIDCensus] { Array(repeating: CloudIDCensus(), count: flagged.count) }

        /// The properties whose form is flagged: the cloudID attribute, and the column a generic
        /// archive names it by (`Plan`'s cloudID key is one of them).
        static let flagged = [CompiledEntity.cloudIDAttribute, "Z" + CompiledEntity.cloudIDAttribute.uppercased()]
        /// The columns before the properties': `pk`, then two flags per `flagged` property.
        static let leadingColumns = ["pk"] + flagged.indices.map { "w\($0)" } + flagged.indices.map { "s\($0)" }

        /// The flag column of `field` (one of `flagged`).
        static func flag(of field: String) -> String? { flagged.firstIndex(of: field).map { "w\($0)" } }

        /// The column of `field` (one of `flagged`) that flags a value a record before may have had.
        static func seenFlag(of field: String) -> String? { flagged.firstIndex(of: field).map { "s\($0)" } }

        static func empty(in db: Database, name: String) throws -> Table {
            try db.execute(
                sql: "CREATE TABLE \(name) (pk INTEGER, \(leadingColumns.dropFirst().map { "\($0) INTEGER" }.joined(separator: ", ")))")
            return Table(name: name)
        }
    }

    /// Of one table's values of a `Table.flagged` property, loaded: how many are well formed, the
    /// hashes of those `SharedValueFilter` flagged as maybe seen before (a value a record before
    /// had, or one sharing its bit), up to `suspectLimit`, past which the set is dropped (nil),
    /// and the hash of every well-formed value, in a file (`hashes`), for the second look
    /// `Comparison.everyRecordHasItsOwn` takes.
    struct CloudIDCensus {
        /// About 1.5 MB of hashes at most; at a million values, the default filter flags some 60,000.
        /// Also about how many hashes `everyRecordHasItsOwn` holds at once when the suspects were dropped.
        static let suspectLimit = 1 << 17
        var wellFormed = 0
        var suspects: Set<UInt64>? = []
        /// Every well-formed value's hash (nil before the first).
        var hashes: HashLog?

        mutating func flagged(_ hash: UInt64, limit: Int) {
            guard suspects != nil else { return }
            if suspects!.count >= limit { suspects = nil } else { suspects!.insert(hash) }
        }
    }

    /// Every entity's records, as an archive holds them; `byTables` makes a model store's or
    /// archive's records its tables' rows (as a generic archive has them). An entity whose member
    /// is byte for byte `twin`'s (the same SHA-256, which the read checks as it reads) is not
    /// parsed or loaded again: its table is `twin`'s, and the comparison knows each record is its
    /// own copy (`Comparison.isTwin`).
    static func side(
        of url: URL, keys: ArchiveKeys, profiles: [AppProfile], workDirectory: URL, label: String, byTables: Bool = false,
        twin: Side? = nil, expected: @escaping (String) -> Expected? = { _ in nil }, thinAll: Bool = false,
        differs: @escaping (String) -> Bool = { _ in false }, snapshot: StoreSnapshot? = nil, db: Database,
        progress: ((RecordProgress) -> Void)?, cancellation: Cancellation?
    ) throws -> Side {
        var store: URL? = FileKind.of(url.path) == .sqliteStore ? url : nil
        if byTables, store == nil {
            // An archive's tables are the store it restores to.
            let folder = workDirectory.appendingPathComponent("\(label)-restored")
            let work = workDirectory.appendingPathComponent("\(label)-import")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let restored = folder.appendingPathComponent("default.store")
            var restore = Importer.Options()
            restore.keys = keys
            restore.profiles = profiles
            restore.cancellation = cancellation
            _ = try Importer.run(archive: url.path, into: restored, options: restore, workDirectory: work)
            store = restored
        }
        if let store {
            return try side(
                ofStore: store, label: label, byTables: byTables, profiles: profiles, twin: twin,
                expected: byTables ? { _ in nil } : expected, thinAll: thinAll && !byTables,
                differs: byTables ? { _ in false } : differs, snapshot: byTables ? nil : snapshot, db: db, progress: progress,
                cancellation: cancellation)
        }
        var side = Side(kind: "", entityNames: [])
        var modelCache: Data?
        let loader = Loader(db: db, prefix: "\(label)\(byTables ? "t" : "")")
        var counter: RecordProgressCounter?
        var twins: Set<String> = []
        let reader = ArchiveReader(path: url.path, displayPath: url.path, keys: keys)
        try db.inTransaction {
            // Read and parsed on a second core while SQLite inserts on this one, as import does;
            // what the producer sets is read once `run` has joined it.
            try HandOff.run(
                capacity: 4,
                produce: { (handOver: ([LineRecord]) throws -> Void) in
                    var batch: [LineRecord] = []
                    var encoder = LineEncoder()
                    _ = try reader.read(
                        onManifest: { manifest in
                            side.kind = manifest.source.schema
                            side.entityNames = manifest.entities.map(\.name)
                            side.digests = Dictionary(
                                manifest.entities.map { ($0.name, $0.sha256) }, uniquingKeysWith: { first, _ in first })
                            if let twin {
                                let same = manifest.entities.filter { twin.digests[$0.name] == $0.sha256 && twin.tables[$0.name] != nil }
                                twins = Set(same.map(\.name))
                            }
                            counter = RecordProgressCounter(
                                report: progress, totals: Dictionary(manifest.entities.map { ($0.name, $0.count) }, uniquingKeysWith: +),
                                step: "read \(label.uppercased())", cancellation: cancellation)
                            if side.kind == ArchiveManifest.Source.knownSchema {
                                side.model = profiles.lazy.compactMap { $0.version(manifest.effectiveSchemaVersion) }.first
                            }
                        },
                        onRecordLine: { member, number, line in
                            if number == 2 { side.firstLines[member.name] = [UInt8](line) }
                            // A twin's member is still read to its end: the reader checks its SHA-256 there.
                            if !twins.contains(member.name) {
                                let record = try line.withUnsafeBytes { try encoder.encode(member.name, $0.bindMemory(to: UInt8.self)) }
                                batch.append(.encoded(entity: member.name, record: record))
                            }
                            try counter?.count(member.name)
                            if batch.count >= 256 {
                                try handOver(batch)
                                batch.removeAll(keepingCapacity: true)
                            }
                        },
                        onFile: { member, data in if member.path == ArchiveManifest.modelCachePath { modelCache = data } })
                    if !batch.isEmpty { try handOver(batch) }
                },
                consume: { batch in
                    for record in batch { try loader.add(record) }
                })
            try loader.flush()
            return .commit
        }
        counter?.finishEntity()
        side.tables = loader.tables
        for name in twins { side.tables[name] = twin?.tables[name] }
        if side.kind == ArchiveManifest.Source.modelSchema, let modelCache {
            // Without a readable model, records are still matched by cloudID and content.
            side.model = (try? ModelCacheDecoder.decode(modelCache)).map { ModelVersion(compiled: $0) }
        }
        return side
    }

    /// A store's records, read by the exporter's own pass over its rows: each record line the one
    /// encoder writes is parsed and loaded as an archive's line is (`JSONLine`, `Loader`), so a
    /// store and its archive give the same scratch values, and no scratch archive is written,
    /// read back and hashed again. A member that may be another side's twin is hashed as it
    /// passes (the SHA-256 its archive would list: of every byte the exporter hands over for it),
    /// so that `twin`'s test is the archive path's: a member whose bytes are `twin`'s is `twin`'s
    /// table. A member that cannot be is not hashed (its digest is nil, which equals none):
    /// on B, one whose first record line is not A's; on A, one whose first record line is not
    /// the archive's `expected` one, one whose table `differs` (a hint, `tableDiffers`), and
    /// every member with `thinAll`. (The lines of equal members are equal, and a digest no
    /// side compares need not be made.)
    /// A member whose first record line is `twin`'s is only hashed, not parsed (the common case
    /// of a store and its copy); when its digest then differs after all, the same snapshot of
    /// the store is read again for those members alone. A member whose first record line differs
    /// cannot be `twin`'s (the lines of equal members are equal), and is loaded at once, as a
    /// second device's are.
    ///
    /// With `thinAll` (the other side is a store of the same bytes or content, never read), every member
    /// is loaded thin, and stands for both sides'.
    /// A member `expected` names (another side's, read before) is loaded thin when its first
    /// record line is the one expected (`Loader.thin`): it may be that side's byte for byte.
    /// One whose digest then differs, or a record of which has no well-formed cloudID (the count
    /// that pairs a twin's records with themselves needs one each), is read again, whole.
    /// `differs` names the members whose table the comparison of two stores found to differ
    /// (`tableDiffers`): on B, such a member is loaded at once, not hashed first.
    static func side(
        ofStore store: URL, label: String, byTables: Bool, profiles: [AppProfile], twin: Side?,
        expected: @escaping (String) -> Expected? = { _ in nil },
        thinAll: Bool = false, differs: @escaping (String) -> Bool = { _ in false }, snapshot: StoreSnapshot? = nil,
        db: Database, progress: ((RecordProgress) -> Void)?, cancellation: Cancellation?
    ) throws -> Side {
        // One copy of the store for every read: the members read again are of the same moment.
        let snapshot = try snapshot ?? StoreSnapshot(storeAt: store)
        func read(exportsByTables: Bool) throws -> Side {
            var side = Side(kind: "", entityNames: [])
            let loader = Loader(db: db, prefix: "\(label)\(byTables ? "t" : "")")
            var options = Exporter.Options(createdAt: 0, compression: .none)
            options.progress = progress.map { report in
                { update in
                    var update = update
                    update.step = "read \(label.uppercased())"
                    report(update)
                }
            }
            options.byTables = exportsByTables
            // Hashed here, member by member, only where a digest is compared (above).
            options.hashesMemberLines = false
            options.profiles = profiles
            options.cancellation = cancellation
            // The members only hashed so far, and those to read again (their digest was not `twin`'s).
            var hashedOnly: Set<String> = []
            var loadOnly: Set<String>?
            var records: Exporter.Records?
            // Kept apart from `side` until the passes are done: `pass` lives on in the thin
            // tables' reload, which `side` holds, and capturing `side` in it would be a cycle that
            // keeps the snapshot, and its copy of the store in the temporary folder, forever.
            var firstLines: [String: [UInt8]] = [:]
            var digests: [String: String] = [:]
            // One pass of the exporter over the snapshot: every member, or those in `loadOnly`
            // (the exporter encodes no other).
            func pass() throws {
                options.onlyMembers = loadOnly
                try db.inTransaction {
                    // Encoded and parsed on a second core while SQLite inserts on this one, as an
                    // archive side is; what the producer sets is read once `run` has joined it.
                    try HandOff.run(
                        capacity: 4,
                        produce: { (handOver: ([LineRecord]) throws -> Void) in
                            var batch: [LineRecord] = []
                            var entity = ""
                            var lineNumber = 0
                            var loads = false
                            var thin = false
                            // A thin member's first record's keys, and the places of those of
                            // `Table.flagged` among them: a later line with the same keys is read
                            // for those strings alone (`thinRecord`).
                            var thinKeys: JSONLine.KeysInOrder?
                            var flaggedPlaces: [Int] = []
                            var encoder = LineEncoder()
                            // The member's header line, until its first record line says whether it is hashed.
                            var header: [UInt8] = []
                            var hasher: SHA256?
                            func digestMember() {
                                if let made = hasher?.finalize() { digests[entity] = made.hexString }
                                hasher = nil
                            }
                            records = try Exporter.records(of: snapshot, options: options) { name, bytes in
                                if name != entity {
                                    digestMember()
                                    entity = name
                                    lineNumber = 0
                                    thin = false
                                    thinKeys = nil
                                }
                                lineNumber += 1
                                hasher?.update(data: bytes)
                                // The first line is the member's header.
                                guard lineNumber > 1 else {
                                    header = bytes
                                    return
                                }
                                // Without its newline, as an archive's reader hands a line over.
                                let line = bytes.last == 0x0A ? bytes.dropLast() : bytes[...]
                                if lineNumber == 2 {
                                    if loadOnly == nil {
                                        firstLines[name] = Array(line)
                                        let mayBeTwin: Bool
                                        if let twin {
                                            mayBeTwin =
                                                twin.tables[name] != nil && twin.firstLines[name]?[...] == line
                                                && !differs(name)
                                            if mayBeTwin { hashedOnly.insert(name) }
                                        } else {
                                            mayBeTwin = !thinAll && (expected(name).map { $0.firstLine[...] == line } ?? !differs(name))
                                        }
                                        if mayBeTwin {
                                            hasher = SHA256()
                                            hasher!.update(data: header)
                                            hasher!.update(data: bytes)
                                        }
                                    }
                                    loads = loadOnly.map { $0.contains(name) } ?? !hashedOnly.contains(name)
                                }
                                guard loads else { return }
                                if let thinKeys,
                                    let record = line.withUnsafeBufferPointer({
                                        Self.thinRecord(name, $0, keys: thinKeys, flaggedPlaces: flaggedPlaces)
                                    })
                                {
                                    batch.append(record)
                                } else if lineNumber > 2, !thin {
                                    let record = try line.withUnsafeBufferPointer { try encoder.encode(name, $0) }
                                    batch.append(.encoded(entity: name, record: record))
                                } else {
                                    let members = try line.withUnsafeBufferPointer { try JSONLine.parseObject($0) }
                                    if lineNumber == 2 {
                                        // Thin only where the other side may hold the member (its
                                        // first line is this one) and the count could pair it (the
                                        // first record's cloudID is well formed).
                                        thin =
                                            loadOnly == nil && !exportsByTables
                                            && (expected(name).map { $0.firstLine[...] == line } ?? thinAll)
                                            && members.contains {
                                                guard $0.key == CompiledEntity.cloudIDAttribute, case .string(let id) = $0.value else {
                                                    return false
                                                }
                                                return DeterministicID.isWellFormed(id)
                                            }
                                        if thin {
                                            let keys = members.map(\.key)
                                            thinKeys = JSONLine.KeysInOrder(keys)
                                            flaggedPlaces = keys.indices.filter { Table.flagged.contains(keys[$0]) }
                                        }
                                    }
                                    batch.append(
                                        thin
                                            ? .whole(entity: name, thin: true, members: members)
                                            : .encoded(entity: name, record: encoder.encode(name, parsed: members)))
                                }
                                if batch.count >= 256 {
                                    try handOver(batch)
                                    batch.removeAll(keepingCapacity: true)
                                }
                            }
                            digestMember()
                            if !batch.isEmpty { try handOver(batch) }
                        },
                        consume: { batch in
                            for record in batch { try loader.add(record) }
                        })
                    try loader.flush()
                    return .commit
                }
            }
            repeat {
                try pass()
                guard loadOnly == nil, let manifest = records?.manifest else { break }
                side.kind = manifest.source.schema
                side.entityNames = manifest.entities.map(\.name)
                side.digests = digests
                side.counts = Dictionary(manifest.entities.map { ($0.name, $0.count) }, uniquingKeysWith: +)
                let twins = hashedOnly.filter { side.digests[$0] != nil && twin?.digests[$0] == side.digests[$0] }
                for name in twins { side.tables[name] = twin?.tables[name] }
                // Thin members that are not the archive's after all, or have a record without a
                // well-formed cloudID, go again, whole, into their emptied tables. (With `thinAll`
                // there is no other side.)
                let reloads = Set(loader.tables.keys).intersection(loader.thin).filter { name in
                    loader.demoted.contains(name) || expected(name).map { side.digests[name] != $0.sha256 } ?? false
                }
                for name in reloads { try loader.empty(name) }
                loadOnly = hashedOnly.subtracting(twins).union(reloads)
            } while loadOnly?.isEmpty == false
            side.firstLines = firstLines
            // The snapshot is kept while a thin table may be read again: its cache is not.
            snapshot.database.releaseMemory()
            if !loader.thin.isEmpty {
                side.thin = ThinTables(
                    entities: loader.thin,
                    reload: { names in
                        // Read again, whole, from the same snapshot, into their emptied tables:
                        // the same rows in the same order, so the same rowids.
                        for name in names { try loader.empty(name) }
                        loadOnly = names
                        try pass()
                        snapshot.database.releaseMemory()
                    })
            }
            for (name, table) in loader.tables { side.tables[name] = table }
            guard let records else { return side }
            if side.kind == ArchiveManifest.Source.knownSchema {
                side.model = profiles.lazy.compactMap { $0.version(records.manifest.effectiveSchemaVersion) }.first
            } else if side.kind == ArchiveManifest.Source.modelSchema, let modelCache = records.modelCache {
                // Without a readable model, records are still matched by cloudID and content.
                side.model = (try? ModelCacheDecoder.decode(modelCache)).map { ModelVersion(compiled: $0) }
            }
            return side
        }
        do {
            return try read(exportsByTables: byTables)
        } catch is Exporter.ByTablesInstead {
            // A value its model's type cannot hold: export writes such a store by its tables, and
            // so does this read, from the start (what it loaded went with its transaction).
            return try read(exportsByTables: true)
        }
    }

    /// A record line as a side's reader hands it to the loader: parsed whole, or, of a member
    /// loaded thin, only what a thin table keeps (`Loader.addThin`), or of a member loaded whole,
    /// encoded for its table (`LineEncoder`).
    enum LineRecord {
        case whole(entity: String, thin: Bool, members: [(key: String, value: JSONValue)])
        case thin(entity: String, keys: [String], cloudIDs: [(index: Int, hash: UInt64)])
        /// A line of a member loaded whole, encoded where it was read (`LineEncoder`).
        case encoded(entity: String, record: EncodedRecord)
    }

    /// A thin member's record line whose keys are `keys` (its first record's), in that order: its
    /// keys and the hashes of the well-formed cloudIDs at `flaggedPlaces` (`Loader.cloudIDHash`),
    /// read by `JSONLine.parseValues`, which gives the values `parseObject` gives (its argument
    /// says why); nil for any other line, which is parsed whole (`parseObject`, which refuses it
    /// when it is no JSON object). Made where the line is read, as `LineEncoder`'s records are.
    static func thinRecord(
        _ entity: String, _ line: UnsafeBufferPointer<UInt8>, keys: JSONLine.KeysInOrder, flaggedPlaces: [Int]
    ) -> LineRecord? {
        guard let values = JSONLine.parseValues(line, keys: keys) else { return nil }
        let cloudIDs = flaggedPlaces.compactMap { place in LineEncoder.cloudIDHash(values[place], in: line).map { (place, $0) } }
        return .thin(entity: entity, keys: keys.names, cloudIDs: cloudIDs)
    }

    /// Writes an archive's record lines into one table per entity.
    final class Loader {
        let db: Database
        let prefix: String
        var tables: [String: Table] = [:]

        /// Where the members of a record go, for one order of keys: the insert (of `pk` and every
        /// column its table had then) and each member's place in its arguments (0 `pk`, nil
        /// none). An encoder writes every record of a member with the same keys in the same
        /// order, so a record is placed by comparing its keys with the last one's, not by looking
        /// each up.
        private struct Layout {
            var entity: String
            var keys: [String]
            var places: [Int?]
            /// Per member: the place of its cloudID-form flag, for a `Table.flagged` property.
            var flags: [Int?]
            var width: Int
            var insert: Statement
        }

        private var last: Layout?
        private var inserts: [String: Statement] = [:]
        private let text = ValueText()
        private static let wellFormed = StoredValue.integer(1)
        /// The place of the cloudID attribute's form flag (`w0`) in a record's values.
        private static let cloudIDFlagPlace = Table.leadingColumns.firstIndex(of: Table.flag(of: CompiledEntity.cloudIDAttribute)!)!
        /// The place of the first flagged property's form flag: the `n`th's is `n` places on.
        private static let firstFlagPlace = Table.leadingColumns.firstIndex(of: Table.flag(of: Table.flagged[0])!)!
        /// The well-formed cloudIDs loaded so far, as a filter (made at the first).
        private var seen: SharedValueFilter?
        private let filterBits: Int
        private let suspectLimit: Int
        /// Records of `last`'s layout not inserted yet, their values one after another: they are
        /// inserted `rowsPerInsert` to a statement (one statement run per record cost as much as
        /// SQLite's insert itself), in the order they came, so each gets the rowid it would have.
        private var pending: [StoredValue] = []
        private var pendingRecords = 0
        /// Of the records counted and not yet added to their table's census (those waiting, and
        /// thin ones), per `Table.flagged` property: the well-formed values, the hashes of those
        /// the filter flagged, and the hashes of all of them (for the census's `hashes`).
        private var pendingWellFormed = Array(repeating: 0, count: Table.flagged.count)
        private var pendingFlagged: [(which: Int, hash: UInt64)] = []
        private var pendingHashes = Array(repeating: [UInt64](), count: Table.flagged.count)
        /// Per table: the statement inserting `rowsPerInsert(width)` records, for the width it was made for.
        private var batchInserts: [String: (width: Int, statement: Statement)] = [:]
        /// The entities loaded thin: their tables have their columns (a column per property any
        /// record has), their count and their census, and no row. That is all a twin's
        /// self-pairing reads when its census decides it (`Comparison.everyRecordHasItsOwn`); a
        /// thin table is kept only while nothing reads more of it (any statement that reads its
        /// rows first loads it whole, `ThinTables`).
        private(set) var thin: Set<String> = []
        /// Thin entities with a record whose cloudID is missing or not well formed.
        private(set) var demoted: Set<String> = []

        /// `filterBits`: the size of the filter of cloudIDs seen; `suspectLimit`: how many hashes
        /// of flagged values a census keeps (a test makes them small).
        init(db: Database, prefix: String, filterBits: Int = 1 << 23, suspectLimit: Int = CloudIDCensus.suspectLimit) {
            self.db = db
            self.prefix = prefix
            self.filterBits = filterBits
            self.suspectLimit = suspectLimit
        }

        /// A line as a side's reader hands it over.
        func add(_ record: LineRecord) throws {
            switch record {
            case .whole(let entity, let thin, let members): try add(entity, members, thin: thin)
            case .thin(let entity, let keys, let cloudIDs): try addThin(entity, keys: keys, cloudIDs: cloudIDs)
            case .encoded(let entity, let record): try add(entity, record)
            }
        }

        func add(_ entity: String, _ members: [(key: String, value: JSONValue)], thin isThin: Bool = false) throws {
            if isThin {
                let cloudIDs = members.indices.compactMap { index -> (index: Int, hash: UInt64)? in
                    guard Table.flagged.contains(members[index].key), case .string(let string) = members[index].value,
                        let hash = Self.cloudIDHash(string)
                    else { return nil }
                    return (index, hash)
                }
                try addThin(entity, keys: members.map(\.key), cloudIDs: cloudIDs)
                return
            }
            try add(entity, LineEncoder.encode(members, text: text))
        }

        /// A record encoded for its table (`LineEncoder`): its values placed in their columns
        /// (`_pk` in `pk` when it is an integer), its well-formed cloudIDs flagged and counted.
        func add(_ entity: String, _ record: EncodedRecord) throws {
            let layout = try self.layout(entity, record.keys)
            tables[entity]!.count += 1
            var values = [StoredValue](repeating: .null, count: layout.width)
            for (index, value) in record.values.enumerated() {
                guard let place = layout.places[index] else { continue }
                if place == 0 {
                    if case .integer = value { values[0] = value }
                } else {
                    values[place] = value
                }
            }
            for (index, hash) in record.cloudIDs {
                guard let flag = layout.flags[index] else { continue }
                values[flag] = Self.wellFormed
                if count(hash, flag: flag) { values[flag + Table.flagged.count] = Self.wellFormed }
            }
            if case .null = values[0] { values[0] = .integer(Int64.min) }
            pending.append(contentsOf: values)
            pendingRecords += 1
            if pendingRecords == Self.rowsPerInsert(layout.width) { try flush() }
        }

        /// A record of a member loaded thin (`thin`): one more in its table's count, a column
        /// for each of its `keys` the table has not yet, and its census counted from `cloudIDs`,
        /// the members (by their place in `keys`) whose key is one of `Table.flagged` and whose
        /// value is a well-formed cloudID, by their `cloudIDHash` (all a thin table keeps); no row.
        func addThin(_ entity: String, keys: [String], cloudIDs: [(index: Int, hash: UInt64)]) throws {
            let layout = try self.layout(entity, keys)
            tables[entity]!.count += 1
            thin.insert(entity)
            var hasCloudID = false
            for (index, hash) in cloudIDs {
                guard let flag = layout.flags[index] else { continue }
                count(hash, flag: flag)
                if flag == Self.cloudIDFlagPlace { hasCloudID = true }
            }
            // The self-pairing that keeps a thin table pairs only well-formed cloudIDs.
            if !hasCloudID { demoted.insert(entity) }
            if pendingHashes.contains(where: { $0.count >= 4096 }) { try takeCensus() }
        }

        /// The layout of a record of `entity` with `keys`: the last one's when they are its keys.
        private func layout(_ entity: String, _ keys: some Collection<String>) throws -> Layout {
            if let last, last.entity == entity, last.keys.count == keys.count, zip(last.keys, keys).allSatisfy({ $0 == $1 }) {
                return last
            }
            // The records waiting are of the last layout, and go in before the table changes.
            try flush()
            let layout = try makeLayout(entity, keys)
            last = layout
            return layout
        }

        /// The hash a census counts a value of a flagged property by: FNV-1a of its UTF-8 bytes,
        /// when it is a well-formed cloudID (nil when it is not, and it is not counted).
        static func cloudIDHash(_ cloudID: String) -> UInt64? {
            DeterministicID.isWellFormed(cloudID) ? StableHasher.fnv1a(cloudID.utf8) : nil
        }

        /// Counts a well-formed cloudID (by its `cloudIDHash`) of the flagged property whose form
        /// flag is at `flag`, for its table's census: whether the filter flags it as maybe seen before.
        @discardableResult
        private func count(_ hash: UInt64, flag: Int) -> Bool {
            let which = flag - Self.firstFlagPlace
            pendingWellFormed[which] += 1
            pendingHashes[which].append(hash)
            if seen == nil { seen = SharedValueFilter(bits: filterBits) }
            guard seen!.insert(hash: hash) else { return false }
            pendingFlagged.append((which, hash))
            return true
        }

        /// Adds what was counted of the records since to the census of `last`'s table (the
        /// records counted since the layout last changed are all of it).
        private func takeCensus() throws {
            guard let entity = last?.entity else { return }
            for (which, count) in pendingWellFormed.enumerated() where count > 0 {
                tables[entity]!.census[which].wellFormed += count
                pendingWellFormed[which] = 0
            }
            for (which, hash) in pendingFlagged { tables[entity]!.census[which].flagged(hash, limit: suspectLimit) }
            pendingFlagged.removeAll(keepingCapacity: true)
            for which in pendingHashes.indices where !pendingHashes[which].isEmpty {
                if tables[entity]!.census[which].hashes == nil { tables[entity]!.census[which].hashes = try HashLog() }
                try tables[entity]!.census[which].hashes!.append(contentsOf: pendingHashes[which])
                pendingHashes[which].removeAll(keepingCapacity: true)
            }
        }

        /// Empties `entity`'s table, to load it again (whole): its rows get the rowids a first load gives.
        func empty(_ entity: String) throws {
            try flush()
            last = nil
            guard let table = tables[entity] else { return }
            try db.execute(sql: "DELETE FROM \(table.name)")
            tables[entity]?.count = 0
            tables[entity]?.census = Table.noCensus
            thin.remove(entity)
            demoted.remove(entity)
        }

        /// Records to an INSERT of `width` columns: many, within the 999 arguments any SQLite
        /// build allows a statement.
        static func rowsPerInsert(_ width: Int) -> Int { max(1, min(64, 999 / max(width, 1))) }

        /// Inserts the records waiting; called by `add`, and once the last record is added.
        func flush() throws {
            try takeCensus()
            guard pendingRecords > 0, let layout = last else { return }
            defer {
                pending.removeAll(keepingCapacity: true)
                pendingRecords = 0
            }
            // Bound with exact byte lengths: GRDB binds text up to its first NUL, and two strings
            // that differ only after one would compare equal.
            guard pendingRecords == Self.rowsPerInsert(layout.width), pendingRecords > 1 else {
                for start in stride(from: 0, to: pending.count, by: layout.width) {
                    try ExactSQL.execute(layout.insert, Array(pending[start..<start + layout.width]))
                }
                return
            }
            let table = tables[layout.entity]!
            let batch: Statement
            if let made = batchInserts[table.name], made.width == layout.width {
                batch = made.statement
            } else {
                batch = try makeInsert(table.name, width: layout.width, rows: pendingRecords)
                batchInserts[table.name] = (layout.width, batch)
            }
            try ExactSQL.execute(batch, pending)
        }

        /// The layout of a record with `members`' keys, adding a column for each new property.
        private func makeLayout(_ entity: String, _ keys: some Collection<String>) throws -> Layout {
            var table = try tables[entity] ?? Table.empty(in: db, name: "\(prefix)_\(tables.count)")
            var places: [Int?] = []
            var flags: [Int?] = []
            var taken: Set<Int> = []
            let leading = Table.leadingColumns.count
            for key in keys {
                var place: Int?
                if key == RecordJSON.primaryKeyKey {
                    place = 0
                } else if !ignored.contains(key) {
                    if table.columns[key] == nil {
                        try db.execute(sql: "ALTER TABLE \(table.name) ADD COLUMN c\(table.columns.count)")
                        table.columns[key] = "c\(table.columns.count)"
                        inserts[entity] = nil
                    }
                    place = Int(table.columns[key]!.dropFirst())! + leading
                }
                // A key written twice counts once, the first time.
                if let found = place, !taken.insert(found).inserted { place = nil }
                places.append(place)
                flags.append(place == nil ? nil : Table.flagged.firstIndex(of: key).map { $0 + 1 })
            }
            tables[entity] = table
            let width = leading + table.columns.count
            let insert = try inserts[entity] ?? makeInsert(table.name, width: width)
            inserts[entity] = insert
            return Layout(entity: entity, keys: Array(keys), places: places, flags: flags, width: width, insert: insert)
        }

        /// An insert of `rows` records of `width` values each (the leading columns, then `c0`, `c1`, …).
        private func makeInsert(_ table: String, width: Int, rows: Int = 1) throws -> Statement {
            let columns = Table.leadingColumns + (0..<width - Table.leadingColumns.count).map { "c\($0)" }
            let row = "(" + columns.map { _ in "?" }.joined(separator: ", ") + ")"
            return try db.makeStatement(
                sql: "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
                    + Array(repeating: row, count: rows).joined(separator: ", "))
        }
    }

    /// A JSON value as the scratch store keeps it, so that two values are equal in SQL exactly when
    /// they are equal JSON: a string is TEXT, an integer INTEGER, anything else a BLOB tagged by
    /// its first byte (`n` null, `t`/`f` a boolean, `d` a Double's bits, `j` an array's or object's
    /// JSON). Storage classes never compare equal, so the string "1" is not the integer 1, nor the
    /// integer 1 the Double 1.0. An absent property is NULL, compared as null.
    enum DiffValue {
        static let nullSQL = "X'6E'"
        private static let null = StoredValue.blob(Data([0x6E]))
        private static let yes = StoredValue.blob(Data([0x74]))
        private static let no = StoredValue.blob(Data([0x66]))

        static func encode(_ value: JSONValue, _ text: ValueText) -> StoredValue {
            switch value {
            case .null: return null
            case .boolean(let flag): return flag ? yes : no
            case .integer(let integer): return .integer(integer)
            case .string(let string): return .text(Data(string.utf8))
            case .number(let number):
                // 0.0 and -0.0 are one value.
                let bits = (number == 0 ? 0 : number).bitPattern.bigEndian
                var data = Data(repeating: 0x64, count: 1)
                withUnsafeBytes(of: bits) { data.append(contentsOf: $0) }
                return .blob(data)
            case .array, .object: return .blob(Data([0x6A]) + Data(text(value).utf8))
            }
        }

        /// The value as `text` shows it; "(none)" for an absent one.
        static func text(_ value: StoredValue, _ text: ValueText) -> String {
            switch value {
            case .null: return text(nil)
            case .integer(let integer): return text(.integer(integer))
            case .real(let number): return text(.number(number))
            case .text(let bytes): return ValueText.quoted(String(decoding: bytes, as: UTF8.self))
            case .blob(let data):
                switch data.first {
                case 0x6E: return "null"
                case 0x74: return "true"
                case 0x66: return "false"
                case 0x64 where data.count == 9:
                    let bits = data.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 1, as: UInt64.self)) }
                    return text(.number(Double(bitPattern: bits)))
                default: return String(decoding: data.dropFirst(), as: UTF8.self)
                }
            }
        }
    }

    static let ignored: Set<String> = [RecordJSON.primaryKeyKey, RecordJSON.optKey, CoreDataSQL.optColumn]

    /// One entity's records of both sides, matched and compared in SQL.
    struct Comparison {
        let db: Database
        let number: Int
        let name: String
        let plan: Plan
        /// Some relationship names this entity's records: its pairs go to `diff_map`.
        let isNamed: Bool
        /// Where `diff_map` is filled from, when a statement first reads it.
        let keyMap: KeyMap
        /// A twin's cloudID that pairs every record with itself is counted, not written (`Shortcuts`).
        let pairsIdentityByCount: Bool
        /// That count is decided from the loader's census of the cloudIDs where it can be.
        let decidesIdentityFromLoad: Bool
        /// A cloudID key no value of which both sides have is not tried in SQL (`Shortcuts`).
        let skipsCloudIDsNotShared: Bool
        /// Loads this entity's table whole when it was loaded thin (`ThinTables`): called before
        /// every statement that reads more of it than the count and the dangling keys do.
        let makeWhole: () throws -> Void
        /// The relationships to records not all matched yet when this entity is (see `diff`):
        /// first no part of the content key, which then pairs only records alike in nothing else;
        /// once every entity is matched, the rounds in `diff` pair the rest with them.
        let deferred: Set<String>
        let a: Table
        let b: Table
        var used: [String] = []
        var tried: [String] = []
        /// The keys tried without a statement, their values shared by no record of the other side.
        var skipped: [String] = []
        /// Records paired so far (each side's records pair at most once).
        var paired = 0
        /// Of those, records a twin's key paired with themselves (`match`'s one statement).
        var pairedWithThemselves = 0
        /// Every record is paired with itself, and these pairs are not in `diff_pairs`: each
        /// statement that reads this entity's pairs reads the table's rowids instead (`pairsSQL`).
        var pairsEveryRecordWithItself = false

        /// A twin's every record is paired with itself.
        var isIdentity: Bool { isTwin && pairedWithThemselves == a.count && paired == a.count }

        /// Every record of one side is paired: no key can pair another.
        var isDone: Bool { paired >= a.count || paired >= b.count }

        var shared: [String] { Set(a.columns.keys).intersection(b.columns.keys).sorted() }

        /// B's records are A's, line for line (`side`'s twin): one table serves both, and a record
        /// paired with itself differs only where a relationship's records were matched otherwise.
        var isTwin: Bool { a.name == b.name }

        static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

        /// SQL for B's `_pk` `key` as the A record it names (matched so far) in `root`.
        static func translated(_ key: String, root: String) -> String {
            "coalesce((SELECT mp.a FROM diff_map mp WHERE mp.root = \(quoted(root)) AND mp.b = \(key)), 'unmatched _pk ' || \(key) || ' of B')"
        }

        /// SQL for a record's value of `field` (of alias `x`), absent as null; on B (`translate`) a
        /// relationship is the A records it names. A to-many is compared as the set it names.
        func value(_ field: String, _ x: String, translate: Bool) -> String {
            let column = "\(x).\((translate ? b : a).columns[field]!)"
            let plain = "coalesce(\(column), \(DiffValue.nullSQL))"
            if plan.toMany.contains(field) {
                let element = translate ? Self.translated("j.value", root: plan.references[field]!) : "j.value"
                let elementSQL = translate ? "CASE WHEN j.type = 'integer' THEN \(element) ELSE j.value END" : element
                return """
                    (CASE WHEN typeof(\(column)) = 'blob' AND substr(\(column), 1, 1) = X'6A' THEN 'j' || coalesce((SELECT group_concat(v, ',') \
                    FROM (SELECT \(elementSQL) AS v FROM json_each(CAST(substr(\(column), 2) AS TEXT)) j ORDER BY v)), '') ELSE \(plain) END)
                    """
            }
            if translate, let root = plan.references[field] {
                return "(CASE WHEN typeof(\(column)) = 'integer' THEN \(Self.translated(column, root: root)) ELSE \(plain) END)"
            }
            return plain
        }

        /// SQL: the record `id` of `side` is not paired yet.
        /// (Nothing is paired yet: no test, the lookup would find nothing.)
        /// (Every record paired with itself, not in `diff_pairs`: none is unmatched; the ids
        /// tested are the table's rowids.)
        private func unmatched(_ side: String, _ id: String) -> String {
            if paired == 0 { return "1" }
            if pairsEveryRecordWithItself { return "0" }
            return "\(id) NOT IN (SELECT p.\(side) FROM diff_pairs p WHERE p.entity = \(number))"
        }

        /// SQL: this entity's pairs as a table `p` of (`a`, `b`) rowids and a condition on it:
        /// `diff_pairs`, or, when every record is paired with itself, each rowid of the one
        /// table with itself, in rowid order, the order the self-pairing's insert writes them.
        private var pairsSQL: (table: String, condition: String) {
            pairsEveryRecordWithItself
                ? ("(SELECT x.rowid AS a, x.rowid AS b FROM \(a.name) x) p", "1")
                : ("diff_pairs p", "p.entity = \(number)")
        }

        /// SQL: the records of `table` (alias `x`) as (`id`, key values `k0`…, and with `cloudID`
        /// the flag `w` of the cloudID's form, and with `seen` also `s` of one seen before), the
        /// `fields`' values (B's relationships translated).
        private func keyRows(_ table: Table, _ fields: [String], translate: Bool, cloudID: Bool, seen: Bool = false) -> String {
            let keys = fields.isEmpty ? ["0 AS k0"] : fields.enumerated().map { "\(value($1, "x", translate: translate)) AS k\($0)" }
            let seenFlag = cloudID && seen ? ", x.\(Table.seenFlag(of: fields[0])!) AS s" : ""
            let flag = cloudID ? ", x.\(Table.flag(of: fields[0])!) AS w\(seenFlag)" : ""
            return "SELECT x.rowid AS id, x.pk AS pk, \(keys.joined(separator: ", "))\(flag) FROM \(table.name) x"
        }

        private mutating func pair(_ kind: String, _ sql: String) throws {
            if !tried.contains(kind) { tried.append(kind) }
            guard !isDone else { return }
            try db.execute(sql: sql)
            paired += db.changesCount
            if db.changesCount > 0, !used.contains(kind) { used.append(kind) }
        }

        /// How the records of one key value are paired: only when one record of each side has
        /// it (`unique`), or each side's records of it, in `_pk` order, one with one (`inPKOrder`).
        enum Pairing {
            case unique, inPKOrder
        }

        /// Pairs A's records with B's whose `fields`' values are equal (B's relationships
        /// translated through `diff_map`), of the records (all, or with `unmatchedOnly` those not
        /// paired yet) where `filter` holds; records paired already are not paired again.
        ///
        /// One statement: both sides' rows (`s` 0 for A, 1 for B) grouped together by their key
        /// values; a group of exactly one row of each side (`count(*) = 2 AND sum(s) = 1`) is a
        /// pair, in `unique`; in `inPKOrder` each side's rows are numbered (`n`) in `_pk` order
        /// within their value first, and a value and number both sides have is a pair. Pairs are
        /// written in A's row order: kept first in `diff_key_pairs`, whose rowid is A's, and read
        /// from it in rowid order (an `ORDER BY` of the grouping's rows would hold a second
        /// sorter's memory while the grouping's is merged: 3 MB more at 100k). (It replaces a
        /// table of each side's key values, B's indexed and A's holding only values B has, and
        /// their join: the same pairs, one sort of both sides instead of three and an index;
        /// docs/performance.md, session 35.)
        private mutating func pairByKey(
            _ kind: String, _ fields: [String], unmatchedOnly: Bool, filter: String, cloudID: Bool = false, pairing: Pairing
        ) throws {
            try makeWhole()
            // B's keys of the records these fields name are translated through `diff_map`.
            try keyMap.fill(fields.compactMap { plan.references[$0] })
            let keys = (0..<max(fields.count, 1)).map { "k\($0)" }.joined(separator: ", ")
            let rows = [(0, "a", a, false), (1, "b", b, true)].map { mark, side, table, translate in
                """
                SELECT \(mark) AS s, id, pk, \(keys) FROM (\(keyRows(table, fields, translate: translate, cloudID: cloudID)) \
                WHERE \(unmatchedOnly ? unmatched(side, "x.rowid") : "1")) WHERE \(filter)
                """
            }.joined(separator: " UNION ALL ")
            let (grouped, groups) =
                switch pairing {
                case .unique: (rows, keys)
                case .inPKOrder:
                    ("SELECT s, id, \(keys), row_number() OVER (PARTITION BY s, \(keys) ORDER BY pk, id) AS n FROM (\(rows))", keys + ", n")
                }
            let stillUnmatched = unmatchedOnly ? "1" : "\(unmatched("a", "q.a")) AND \(unmatched("b", "q.b"))"
            // Each A record is in one group: its rowid is a pair's at most once.
            try db.execute(
                sql: """
                    INSERT INTO diff_key_pairs (a, b) SELECT q.a, q.b FROM (SELECT max(CASE WHEN s = 0 THEN id END) AS a, \
                    max(CASE WHEN s = 1 THEN id END) AS b FROM (\(grouped)) GROUP BY \(groups) HAVING count(*) = 2 AND sum(s) = 1) q \
                    WHERE \(stillUnmatched)
                    """)
            try pair(kind, "INSERT INTO diff_pairs (entity, a, b) SELECT \(number), a, b FROM diff_key_pairs ORDER BY a")
            try db.execute(sql: "DELETE FROM diff_key_pairs")
        }

        /// Pairs A's records with B's by the plan's keys, each tried on the records the ones before it left.
        mutating func match() throws {
            let shared = Set(shared)
            for key in plan.keys where key.fields.allSatisfy(shared.contains) {
                // A key identifies a record only when it has a value on it that no other record of
                // its side shares (a cloudID also well-formed: a shared one is a default a migration left).
                let names = key.fields.indices.map { "k\($0)" }
                // A well-formed cloudID (flagged while loading) is a string, so not null.
                let conditions = key.isCloudID ? ["w = 1"] : names.map { "\($0) IS NOT \(DiffValue.nullSQL)" }
                guard !isDone else {
                    tried.append(key.kind)
                    continue
                }
                // A key of no relationship has the same values on a twin's two sides: a record
                // whose value no other record shares is paired with itself, as the join would pair it.
                let selfPaired = isTwin && !key.fields.contains { plan.references[$0] != nil }
                let filter = conditions.joined(separator: " AND ")
                if selfPaired {
                    // One statement, no key table: A's records whose key values no other A record
                    // shares (those shared are found by grouping), in `_pk`'s table order.
                    let rows = "(\(keyRows(a, key.fields, translate: false, cloudID: key.isCloudID, seen: true))) WHERE \(filter)"
                    let tuple = names.joined(separator: ", ")
                    // A cloudID shared is one of those flagged as seen before (`s`): every record
                    // after the first of a value shared is, so grouping the records of the flagged
                    // values finds every value shared, without sorting all of them.
                    let flagged = key.isCloudID ? "AND (\(tuple)) IN (SELECT \(tuple) FROM \(rows) AND s = 1)" : ""
                    let before = paired
                    defer { pairedWithThemselves += paired - before }
                    let selfPairs = """
                        FROM \(rows) AND (\(tuple)) NOT IN (SELECT \(tuple) FROM \(rows) \(flagged) GROUP BY \(tuple) HAVING count(*) > 1) \
                        AND \(unmatched("a", "id")) AND \(unmatched("b", "id"))
                        """
                    if pairsIdentityByCount, paired == 0, key.isCloudID,
                        try pairsEveryRecordWithItself(counting: selfPairs, cloudID: key.fields[0])
                    {
                        // As `pair` records a statement that paired some.
                        if !tried.contains(key.kind) { tried.append(key.kind) }
                        if !used.contains(key.kind) { used.append(key.kind) }
                        continue
                    }
                    // Not every record paired so: what follows reads the whole table.
                    try makeWhole()
                    try pair(key.kind, "INSERT INTO diff_pairs (entity, a, b) SELECT \(number), id, id \(selfPairs) ORDER BY id")
                    continue
                }
                if key.isCloudID, skipsCloudIDsNotShared, let which = Table.flagged.firstIndex(of: key.fields[0]),
                    try !a.census[which].mayShareAValue(with: b.census[which])
                {
                    // No well-formed value is on both sides: the statement would pair none (its
                    // rows are those flagged well formed, `w = 1`). Tried, as `pair` records it.
                    if !tried.contains(key.kind) { tried.append(key.kind) }
                    skipped.append(key.kind)
                    continue
                }
                try pairByKey(key.kind, key.fields, unmatchedOnly: false, filter: filter, cloudID: key.isCloudID, pairing: .unique)
            }
            if !isDone { try makeWhole() }
            if plan.isSingleton {
                let left = try Int64.fetchAll(db, sql: "SELECT x.rowid FROM \(a.name) x WHERE \(unmatched("a", "x.rowid")) LIMIT 2")
                let right = try Int64.fetchAll(db, sql: "SELECT x.rowid FROM \(b.name) x WHERE \(unmatched("b", "x.rowid")) LIMIT 2")
                if left.count == 1, right.count == 1 {
                    try pair("singleton", "INSERT INTO diff_pairs (entity, a, b) VALUES (\(number), \(left[0]), \(right[0]))")
                }
            }
            // Then every value and to-one equal; equal records on one side pair with equal ones on
            // the other in `_pk` order. Without the deferred relationships, only records alike in
            // nothing else pair now (the rounds in `diff` pair the rest).
            if deferred.isEmpty {
                try pairByContent(.all, uniqueOnly: false)
            } else {
                try pairByContent(.withoutDeferred, uniqueOnly: true)
            }
            if plan.byTables {
                try pair(
                    "_pk",
                    """
                    INSERT INTO diff_pairs (entity, a, b) SELECT \(number), l.rowid, r.rowid FROM \(a.name) l JOIN \(b.name) r ON r.pk = l.pk \
                    WHERE \(unmatched("a", "l.rowid")) AND \(unmatched("b", "r.rowid"))
                    """)
            }
            try recordMatches()
        }

        /// Whether the self-pairing `selfPairs` (`FROM … WHERE …` of records `id`) would pair every
        /// record, counted rather than written: when it would, every record is paired with
        /// itself (`pairsEveryRecordWithItself`), as its `INSERT` would pair them. Its rows are
        /// distinct rowids of the one table, so as many as the table has are all of them. It
        /// counts every record whose `cloudID` is well formed and shared by no other: as many as
        /// the table has exactly when each has a well-formed value of its own, which the loader's
        /// census decides, when it can, without the count (`everyRecordHasItsOwn`).
        private mutating func pairsEveryRecordWithItself(counting selfPairs: String, cloudID: String) throws -> Bool {
            let decided = decidesIdentityFromLoad ? try Self.everyRecordHasItsOwn(cloudID, in: a) : nil
            // The count reads the rows, which a thin table has not.
            if decided == nil { try makeWhole() }
            guard try decided ?? (Int.fetchOne(db, sql: "SELECT count(*) \(selfPairs)") == a.count) else { return false }
            pairsEveryRecordWithItself = true
            paired = a.count
            return true
        }

        /// Whether every record of `table` has a well-formed value of `field` (one of
        /// `Table.flagged`) that no other record of it has, decided from the loader's census of
        /// the field (`CloudIDCensus`) without reading a row; nil when the census cannot say (one
        /// hash found twice), and the count in SQL decides.
        ///
        /// Why it is exact: when every record has a well-formed value, the census's `hashes` are
        /// one hash per record, of the bytes SQL compares (the column's TEXT is the string's
        /// UTF-8, `DiffValue.encode`; a thin table's record is counted from the same string), so
        /// "the same" means what it means to the count's `GROUP BY`. A value on two records puts
        /// its hash in the log twice, so "yes" is said only when no hash is there twice, and then
        /// no value is on two records. Looking for a hash twice: a value a record shares with one
        /// loaded before it is flagged (the filter never misses a value seen), so its hash is
        /// among the suspects, and one pass over the log finds it twice; when the suspects were
        /// too many to keep, the log is read in rounds, each holding the hashes of one residue
        /// modulo the rounds (equal hashes share a round), at most `CloudIDCensus.suspectLimit`
        /// of them on average, so memory stays bounded at any size.
        /// (`hashesPerRound`: a test makes the rounds small.)
        static func everyRecordHasItsOwn(
            _ field: String, in table: Table, hashesPerRound: Int = CloudIDCensus.suspectLimit
        ) throws -> Bool? {
            guard let which = Table.flagged.firstIndex(of: field), table.columns[field] != nil else { return nil }
            let census = table.census[which]
            // A record without a well-formed value is one the count leaves out.
            guard census.wellFormed == table.count else { return false }
            guard let hashes = census.hashes, hashes.count > 0 else { return true }
            struct FoundTwice: Error {}
            do {
                if let suspects = census.suspects {
                    guard !suspects.isEmpty else { return true }
                    var found = Set<UInt64>(minimumCapacity: suspects.count)
                    try hashes.forEachHash { hash in
                        if suspects.contains(hash), !found.insert(hash).inserted { throw FoundTwice() }
                    }
                } else {
                    let rounds = UInt64((hashes.count + hashesPerRound - 1) / hashesPerRound)
                    for round in 0..<rounds {
                        var found = Set<UInt64>(minimumCapacity: hashesPerRound)
                        try hashes.forEachHash { hash in
                            if hash % rounds == round, !found.insert(hash).inserted { throw FoundTwice() }
                        }
                    }
                }
            } catch is FoundTwice {
                return nil
            }
            return true
        }

        /// Which fields a content key compares: every value and to-one, all but the deferred
        /// relationships, or the values alone.
        enum ContentFields {
            case all, withoutDeferred, valuesOnly
        }

        /// Pairs the records not paired yet whose `fields` are all equal: only those no other record
        /// of either side equals (`uniqueOnly`), or equal ones in `_pk` order. Returns how many it
        /// paired (`recordMatches` puts them in `diff_map`).
        @discardableResult
        mutating func pairByContent(_ fields: ContentFields, uniqueOnly: Bool) throws -> Int {
            guard !isDone else {
                if !tried.contains("content") { tried.append("content") }
                return 0
            }
            try makeWhole()
            let content = shared.filter { field in
                switch fields {
                case .all: !plan.toMany.contains(field)
                case .withoutDeferred: !plan.toMany.contains(field) && !deferred.contains(field)
                case .valuesOnly: plan.references[field] == nil
                }
            }
            let before = paired
            try pairByKey("content", content, unmatchedOnly: true, filter: "1", pairing: uniqueOnly ? .unique : .inPKOrder)
            return paired - before
        }

        /// The pairs go to `diff_map`, where a relationship to this entity looks them up.
        /// (Kept by `keyMap` until a statement reads `diff_map`.)
        func recordMatches() throws {
            guard isNamed else { return }
            let (pairs, condition) = pairsSQL
            let sql = """
                INSERT OR REPLACE INTO diff_map (root, b, a) SELECT \(Self.quoted(plan.root)), r.pk, l.pk FROM \(pairs) \
                JOIN \(a.name) l ON l.rowid = p.a JOIN \(b.name) r ON r.rowid = p.b WHERE \(condition)
                """
            // It reads this entity's rows, which a thin table has not yet.
            try keyMap.add(root: plan.root) { [db, makeWhole] in
                try makeWhole()
                try db.execute(sql: sql)
            }
        }

        /// "_pk 12", with the record's cloudID when it has a well-formed one.
        private func label(_ key: Int64, _ cloudID: StoredValue) -> String {
            var text = "_pk \(key)"
            if case .text(let bytes) = cloudID, case let id = String(decoding: bytes, as: UTF8.self), DeterministicID.isWellFormed(id) {
                text += " (cloudID \(id))"
            }
            return text
        }

        private func cloudColumn(_ table: Table, _ x: String) -> String {
            plan.keys.first(where: \.isCloudID).flatMap { table.columns[$0.fields[0]] }.map { "\(x).\($0)" } ?? "NULL"
        }

        /// SQL: every shared field of the pair `l`, `r` as a flag (`d0`…), 1 where it differs.
        private func differs(_ shared: [String]) -> [String] {
            shared.enumerated().map { "\(difference($1)) AS d\($0)" }
        }

        /// SQL: 1 where the pair `l`, `r` differs in `field`.
        private func difference(_ field: String) -> String {
            "(\(value(field, "l", translate: false)) IS NOT \(value(field, "r", translate: true)))"
        }

        /// SQL: 1 where the pair `p` (of records `l`, `r`) differs in any of `shared`. A twin's
        /// record paired with itself can differ only in a relationship, which B's side translates.
        private func anyDifference(_ shared: [String]) -> String {
            let all = shared.map(difference).joined(separator: " OR ")
            guard isTwin else { return all }
            let relationships = shared.filter { plan.references[$0] != nil }.map(difference)
            return "CASE WHEN p.a = p.b THEN \(relationships.isEmpty ? "0" : relationships.joined(separator: " OR ")) ELSE \(all) END"
        }

        /// The counts: the changed pairs are found once and kept (`diff_changed`), so that the
        /// listing reads only them.
        ///
        /// No record of an entity whose every record is paired with itself (`isIdentity`) can
        /// differ when each relationship it has names a root in `identicalRoots` and none is a
        /// to-many, and its records are not compared (unless `comparesSelfPairsInSQL`, as a test
        /// does to check this): `anyDifference` compares a record paired with itself only in its
        /// relationships, and B's key `k` of such a root is translated to `k` itself. Each of the
        /// root's records is paired with itself, so `diff_map` maps its `_pk` to itself; a key no
        /// record has is no `_pk` of the root on either side (its tables are the same on both),
        /// and this entity's table is both sides', so `mapDanglingKeys` finds it on both and maps
        /// it to itself; a value that is no integer is compared untranslated, with itself. (A
        /// to-many's element naming no record is not mapped so, and would differ.)
        func summary(identicalRoots: Set<String> = [], comparesSelfPairsInSQL: Bool = false) throws -> EntityDiff {
            let shared = self.shared
            var changed = 0
            if comparesRecords(identicalRoots: identicalRoots, comparesSelfPairsInSQL: comparesSelfPairsInSQL) {
                try makeWhole()
                try keyMap.fill(shared.compactMap { plan.references[$0] })
                let (pairs, condition) = pairsSQL
                try db.execute(
                    sql: """
                        INSERT INTO diff_changed (entity, a, b) SELECT \(number), p.a, p.b FROM \(pairs) \
                        JOIN \(a.name) l ON l.rowid = p.a JOIN \(b.name) r ON r.rowid = p.b WHERE \(condition) \
                        AND (\(anyDifference(shared)))
                        """)
                changed = db.changesCount
            }
            let empty = a.count == 0 || b.count == 0
            return EntityDiff(
                name: name, matchedBy: used.isEmpty ? tried.first ?? "content" : used.joined(separator: ", "),
                added: b.count - paired, removed: a.count - paired, changed: changed,
                fieldsOnlyInB: empty ? [] : Set(b.columns.keys).subtracting(a.columns.keys).sorted(),
                fieldsOnlyInA: empty ? [] : Set(a.columns.keys).subtracting(b.columns.keys).sorted())
        }

        /// Whether `summary` runs the comparison of this entity's pairs (see there).
        func comparesRecords(identicalRoots: Set<String>, comparesSelfPairsInSQL: Bool) -> Bool {
            let shared = self.shared
            let cannotDiffer =
                isIdentity
                && shared.allSatisfy { field in
                    !plan.toMany.contains(field) && plan.references[field].map(identicalRoots.contains) != false
                }
            return !shared.isEmpty && (comparesSelfPairsInSQL || !cannotDiffer)
        }

        /// The records only B has, then only A has, then the changed ones, each read as it is listed.
        /// (A side whose every record is paired, as its count says, is not read for them: each
        /// record pairs at most once, so `count - paired` are left, the count `summary` gives.)
        func forEachLine(_ body: (Line) throws -> Void) throws {
            for (table, side, line, left) in [(b, "b", Line.added, b.count - paired), (a, "a", Line.removed, a.count - paired)]
            where left > 0 {
                try ExactSQL.forEachRow(
                    db,
                    sql:
                        "SELECT x.pk, \(cloudColumn(table, "x")) FROM \(table.name) x WHERE \(unmatched(side, "x.rowid")) ORDER BY x.pk, x.rowid"
                ) { row in try body(line(label(row.integer(0) ?? 0, row[1]))) }
            }
            let shared = self.shared
            // Nothing changed (`summary` found no pair): no statement, and no `diff_map` to fill for it.
            guard !shared.isEmpty,
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM diff_changed WHERE entity = \(number))") == true
            else { return }
            try makeWhole()
            try keyMap.fill(shared.compactMap { plan.references[$0] })
            let text = ValueText()
            let values = shared.map { "l.\(a.columns[$0]!), r.\(b.columns[$0]!)" }
            // Read exactly (GRDB's rows would end a string at its first NUL).
            try ExactSQL.forEachRow(
                db,
                sql: """
                    SELECT l.pk AS old_pk, r.pk AS new_pk, \(cloudColumn(a, "l")) AS cloud, \(values.joined(separator: ", ")), \
                    \(differs(shared).joined(separator: ", ")) FROM diff_changed p JOIN \(a.name) l ON l.rowid = p.a \
                    JOIN \(b.name) r ON r.rowid = p.b WHERE p.entity = \(number) ORDER BY old_pk
                    """
            ) { row in
                let (old, new) = (row.integer(0) ?? 0, row.integer(1) ?? 0)
                let fields = shared.indices.compactMap { index -> FieldChange? in
                    guard row.integer(3 + 2 * shared.count + index) == 1 else { return nil }
                    return FieldChange(
                        field: shared[index], old: DiffValue.text(row[3 + 2 * index], text),
                        new: DiffValue.text(row[4 + 2 * index], text))
                }
                let moved = old == new ? "" : ", _pk \(new) in B"
                try body(.changed(Changed(identity: label(old, row[2]) + moved, fields: fields)))
            }
        }
    }

    /// Values as the listing shows them: JSON, "(none)" for an absent one. Scalars, and arrays of
    /// them, are written by hand as `JSONEncoder` writes them (a test compares the two); an
    /// object, or a number JSON cannot hold, goes through the one encoder (making one costs more
    /// than encoding a value).
    final class ValueText {
        private let encoder = JSONEncoder()

        init() { encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes] }

        func callAsFunction(_ value: JSONValue?) -> String {
            guard let value else { return "(none)" }
            if let text = Self.scalar(value) { return text }
            if case .array(let elements) = value {
                var text = "["
                for element in elements {
                    guard let written = Self.scalar(element) else { return encoded(value) }
                    if text.utf8.count > 1 { text += "," }
                    text += written
                }
                return text + "]"
            }
            return encoded(value)
        }

        private func encoded(_ value: JSONValue) -> String {
            (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
        }

        /// A scalar's JSON, nil for an array, an object, or a number JSON has no spelling for.
        static func scalar(_ value: JSONValue) -> String? {
            switch value {
            case .null: return "null"
            case .boolean(let flag): return flag ? "true" : "false"
            case .integer(let integer): return String(integer)
            case .number(let number):
                guard number.isFinite else { return nil }
                let text = number.description
                return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
            case .string(let string): return quoted(string)
            case .array, .object: return nil
            }
        }

        /// A JSON string as `JSONEncoder` spells it (the one codec's writer, with `\b` and `\f`).
        static func quoted(_ string: String) -> String {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(string.utf8.count + 2)
            ValueJSON.appendString(string, to: &bytes, shortBackspaceAndFormFeed: true)
            return String(decoding: bytes, as: UTF8.self)
        }
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
        /// The same properties with the entity they name (its records, or its sub-entities').
        var destinations: [String: String] = [:]
        /// The references that are to-many (an array of `_pk`s): not part of a record's content key.
        var toMany: Set<String> = []
        /// A table's rows (a generic archive's): no model says what identifies them, so rows left
        /// unmatched are, last, matched by `_pk`.
        var byTables = false
    }

    static func models(_ left: Side, _ right: Side) -> [ModelVersion] { [right.model, left.model].compactMap { $0 } }

    static func root(of name: String, in models: [ModelVersion]) -> String { lineage(of: name, in: models).last ?? name }

    /// The entity and its parents, nearest first (a loop in a damaged model is cut).
    static func lineage(of name: String, in models: [ModelVersion]) -> [String] {
        var lineage = [name]
        while let parent = models.lazy.compactMap({ $0.compiled.entity(named: lineage[lineage.count - 1])?.superentity }).first,
            !lineage.contains(parent)
        {
            lineage.append(parent)
        }
        return lineage
    }

    static func plan(for name: String, _ left: Side, _ right: Side, byTables generic: Bool) -> Plan {
        let models = models(left, right)
        var plan = Plan(root: root(of: name, in: models))
        plan.byTables = generic
        // A generic archive has columns: ZCLOUDID is the cloudID attribute's.
        plan.keys.append(
            Plan.Key(
                kind: "cloudID", fields: [generic ? "Z" + CompiledEntity.cloudIDAttribute.uppercased() : CompiledEntity.cloudIDAttribute],
                isCloudID: true))
        guard !generic, let model = models.first(where: { $0.compiled.entity(named: name) != nil }),
            let entity = model.compiled.entity(named: name)
        else {
            return plan
        }
        var lineage = [entity]
        while let parent = lineage.last?.superentity.flatMap({ model.compiled.entity(named: $0) }),
            !lineage.contains(where: { $0.name == parent.name })
        {
            lineage.append(parent)
        }
        for tuple in lineage.flatMap(\.uniqueTuples) where !tuple.isEmpty {
            plan.keys.append(Plan.Key(kind: "uniqueness constraint (\(tuple.joined(separator: ", ")))", fields: tuple))
        }
        let identity = model.identity(of: entity.name)
        if !identity.naturalKey.isEmpty {
            plan.keys.append(Plan.Key(kind: "natural key (\(identity.naturalKey.joined(separator: ", ")))", fields: identity.naturalKey))
        }
        plan.isSingleton = identity.singletonCloudID != nil
        for relationship in lineage.flatMap(\.relationships) {
            plan.references[relationship.name] = root(of: relationship.destination, in: models)
            plan.destinations[relationship.name] = relationship.destination
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
}

/// A fixed number of bits, a hash of a value's UTF-8 bytes choosing one: `insert` says whether
/// the value's bit was set already. It is for every value inserted before with the same bytes
/// (those SQL finds equal), and for a few others that share its bit, so it never misses a value
/// seen before, and takes the same memory however many values pass (1 MB by default: at a
/// million values, about 6% of them are flagged without having been seen).
struct SharedValueFilter {
    private var words: [UInt64]

    init(bits: Int) { words = Array(repeating: 0, count: max(bits / 64, 1)) }

    /// Sets the bit of the value whose FNV-1a hash of its UTF-8 bytes is `hash` (`hashValue`
    /// would hash a string's normalized form); true when it was set.
    mutating func insert(hash: UInt64) -> Bool {
        let bit = hash % UInt64(words.count * 64)
        let (word, mask) = (Int(bit / 64), UInt64(1) << (bit % 64))
        defer { words[word] |= mask }
        return words[word] & mask != 0
    }
}
