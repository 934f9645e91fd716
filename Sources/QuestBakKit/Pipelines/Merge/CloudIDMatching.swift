import CoreDataStore
import Foundation
import GRDB

extension RecordMerge {
    /// What `pairedBySameKey` found.
    struct SameKeyPairing {
        /// Every archive record was matched, and the map holds the cloudID key's rows for them:
        /// the key table, its lookups and the archive side's take-back are not needed.
        var matchedEveryRecord: Bool
        /// Whether every store cloudID is an identity (`CloudIDPass`), where that was asked.
        var storeCloudIDsAreIdentities: Bool?
    }

    /// The cloudID key's matching for an archive of the store itself (a reinstalled device's
    /// backup merged back): each archive record is paired with the store record of the same
    /// `Z_PK` (the archive's restore keeps the keys), and the pair kept where their cloudIDs
    /// are the same bytes. Where that pairs every archive record, its map rows are the ones the
    /// cloudID key's lookup (`match(_:by:)`) gives, and they are written; else none is, and the
    /// lookup runs as it always did.
    ///
    /// *Why the rows are the lookup's.* The lookup gives an archive record the store record
    /// whose cloudID equals its own (`k.k0 = +i.column`: the store's non-NULL values copied to a
    /// column without affinity and with BINARY collation, the archive's with its affinity
    /// stripped, so no conversion and a byte comparison of two texts, and a text never equal to
    /// a number or a BLOB) where exactly one store record has it. Asked only where every store
    /// cloudID is an identity (`CloudIDPass`: well-formed TEXT, no two the same, in a table that
    /// declares no collation), which makes "exactly one" "at least one". The pairing compares
    /// `+s.column = +i.column COLLATE BINARY`: no affinity on either side, BINARY collation,
    /// the same comparison. So a record it pairs is given the same store record, and where it
    /// pairs every record, the lookup gives no other row. The map is keyed by table and archive
    /// key (`WITHOUT ROWID`), so the order its rows are written in leaves it the same.
    ///
    /// *Why the archive side's take-back finds nothing then.* After the lookup, the matches of
    /// archive records whose cloudID is no identity on the archive's side (not well formed, or
    /// another archive record's, as the incoming table's `GROUP BY` compares them) are taken
    /// back. Each archive record here holds its store partner's bytes, which are well formed;
    /// two archive records have two keys, so two store partners, whose cloudIDs differ: no two
    /// archive records hold the same bytes, and where the incoming table declares no collation
    /// (asked; else the lookup runs) the `GROUP BY` compares bytes. Every record passes, and
    /// there is nothing to take back.
    ///
    /// Only where no key before it matched a record of the entity (the map holds no row of one
    /// yet), so that no row written conflicts with one written before. `storeCloudIDsAreIdentities`: the
    /// answer of the matching's pass over the store's cloudIDs, if it ran (`noCloudIDIsInBoth`).
    static func pairedBySameKey(
        column: String, of table: String, storeRows: String, archiveRows: String, storeCount: Int, archiveCount: Int,
        storeCloudIDsAreIdentities: Bool?, db: Database
    ) throws -> SameKeyPairing {
        let identities =
            try storeCloudIDsAreIdentities
            ?? CloudIDPass(
                column: column, of: table, in: "main", alias: "s", rows: storeRows, expectedCount: storeCount, keepingTexts: false,
                db: db
            ).allIdentities
        guard identities, archiveCount > 0, try !CoreDataSQL.declaresCollation(db, table: table, schema: "incoming") else {
            return SameKeyPairing(matchedEveryRecord: false, storeCloudIDsAreIdentities: identities)
        }
        let (map, how) = (mapName(table), MapOrigin.cloudID.rawValue)
        try db.execute(
            sql: """
                INSERT INTO \(map) (incoming, store, how)
                SELECT i.\(CoreDataSQL.keyColumn), s.\(CoreDataSQL.keyColumn), \(how) FROM incoming.\(table) i
                JOIN main.\(table) s ON s.\(CoreDataSQL.keyColumn) = i.\(CoreDataSQL.keyColumn)
                WHERE \(archiveRows) AND \(storeRows) AND +s.\(column) = +i.\(column) COLLATE BINARY
                """)
        guard db.changesCount != archiveCount else {
            return SameKeyPairing(matchedEveryRecord: true, storeCloudIDsAreIdentities: identities)
        }
        // Some record has no partner of its key (the store lost it, or its keys were renumbered):
        // the rows written are taken back (the map held none of the entity's records before),
        // and the lookup asks every record.
        try db.execute(
            sql: """
                DELETE FROM \(map) WHERE how = \(how) AND incoming IN (
                    SELECT i.\(CoreDataSQL.keyColumn) FROM incoming.\(table) i WHERE \(archiveRows))
                """)
        return SameKeyPairing(matchedEveryRecord: false, storeCloudIDsAreIdentities: identities)
    }
}
