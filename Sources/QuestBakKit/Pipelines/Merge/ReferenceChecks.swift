import CoreDataStore
import Foundation
import GRDB

/// What the merge asks of references that reads only files nothing writes while it runs, asked on
/// connections of their own on a second core while the merge's own connection matches records:
/// the store's references to no record before the merge (`RecordMerge.danglingReferences`, of the
/// store's copy), and which references of the archive each name a record (`reportDangling` would
/// find none). Each answer is waited for where the merge needs it; an error is thrown there.
struct ReferenceChecks {
    /// By `table.column`: how many of the store's rows name no record of their destination table.
    let danglingBefore: BackgroundResult<[String: Int]>
    /// The reference fields (`entity.field`) of which every archive record's value is NULL or
    /// names a record of an entity of the layout.
    let archiveNamesOnlyRecords: BackgroundResult<Set<String>>

    /// `storeCopy`: a file with the bytes the merged store has before the merge writes (the
    /// store's snapshot, which `copyFiles` copied it from and nothing writes after); `archive`:
    /// the restored archive the merge attaches as `incoming`.
    static func start(layout: MergeLayout, storeCopy: String, archive: String) -> ReferenceChecks {
        let storeQueries = RecordMerge.danglingReferenceQueries(layout)
        let archiveQueries = untranslatableQueries(layout)
        return ReferenceChecks(
            danglingBefore: BackgroundResult {
                try read(storeCopy) { db in try RecordMerge.danglingReferences(db, storeQueries) }
            },
            archiveNamesOnlyRecords: BackgroundResult {
                try read(archive) { db in
                    Set(try archiveQueries.filter { try Bool.fetchOne(db, sql: $0.sql) == false }.map(\.field))
                }
            })
    }

    private static func read<T>(_ path: String, _ body: (Database) throws -> T) throws -> T {
        let queue = try DatabaseQueue(path: path, configuration: StoreReader.besideConfiguration(readonly: true))
        defer { try? queue.close() }
        return try queue.read(body)
    }

    /// Per reference field (`entity.field`): whether any archive record (the entity's rows of the
    /// restored archive, opened as `main`) holds a value that names no record of an entity of the layout in the destination
    /// table.
    ///
    /// *Why "no" means `reportDangling` finds nothing.* It lists the entity's records in the map
    /// (the entity's table's map) whose value is not NULL and that the map has no row for
    /// (the destination table's, `incoming` the value). Once every entity is matched the map
    /// holds one row for each archive record of each entity of the layout and no other: the
    /// matching (singleton, keys, content) and `assignNewKeys` add rows only for records of the
    /// entity's own rows (`rows`), one at most each (a table's map is keyed by the record's
    /// key), and `assignNewKeys` checks that after it every such record has one. So the map has a
    /// row (R, v) exactly when a record of an entity of the layout on table R has `Z_PK` = v in
    /// the archive, compared as `d.incoming = value` compares: `map.incoming` and `Z_PK` both have
    /// INTEGER affinity and hold integers, on the left of the same `=`. And every record of the
    /// entity the query reads has its row in the map, so the join with it drops none. An
    /// entity's destination table no entity of the layout has leaves its field out: each value
    /// there names nothing the map has.
    private static func untranslatableQueries(_ layout: MergeLayout) -> [(field: String, sql: String)] {
        layout.entities.flatMap { entity in
            entity.fields.compactMap { field -> (field: String, sql: String)? in
                guard let reference = field.reference else { return nil }
                let destinations = layout.entities.filter { $0.table == reference }.map { "(\($0.rows("d")))" }
                guard !destinations.isEmpty else { return nil }
                return (
                    "\(entity.name).\(field.name)",
                    """
                    SELECT EXISTS (SELECT 1 FROM main.\(entity.table) i WHERE \(entity.rows("i")) AND i.\(field.column) IS NOT NULL
                        AND NOT EXISTS (SELECT 1 FROM main.\(reference) d
                                        WHERE d.\(CoreDataSQL.keyColumn) = i.\(field.column) AND (\(destinations.joined(separator: " OR ")))))
                    """
                )
            }
        }
    }
}
