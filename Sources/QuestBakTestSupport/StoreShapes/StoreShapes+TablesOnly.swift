import Foundation
import GRDB
import QuestBakKit

extension StoreShapes {
    /// Stores described by their tables (no model cache, or one that does not explain them), and
    /// what any store's file and schema hold besides its records (issue #23, section 1).
    public static var tablesOnly: [StoreShape] {
        [
            StoreShape("tables-only: no Z_MODELCACHE, no checksum keys, rollback journal", make: TablesOnlyShapes.legacyCoreData),
            StoreShape("tables-only: TEXT Z_PK and to-one key in an untyped table", make: TablesOnlyShapes.untypedTable),
            StoreShape("tables-only: kitchen-sink with a TEXT to-one key", make: TablesOnlyShapes.textToOneKey),
            StoreShape("tables-only: a trigger and a view made before a later table", make: TablesOnlyShapes.triggerBeforeLaterTable),
            StoreShape("tables-only: fts5, fts4 and rtree virtual tables", make: TablesOnlyShapes.virtualTables),
            StoreShape("tables-only: user_version and application_id", make: TablesOnlyShapes.headerFields),
            StoreShape("tables-only: a second Z_METADATA row, a duplicated Z_MODELCACHE row", make: TablesOnlyShapes.extraBookkeepingRows),
            StoreShape("model: kitchen-sink with user_version, a trigger and an fts5 table", make: TablesOnlyShapes.modelStoreWithExtras),
        ]
    }
}

/// The stores of `StoreShapes.tablesOnly`, each made from a copy of a fixture store and changed
/// as another tool or an older Core Data would have left it.
public enum TablesOnlyShapes {
    static func bennieGame(_ folder: URL) throws -> URL { try StoreShapes.copy("AnyApp/bennie-game", into: folder) }

    /// Core Data before about 2015: no model cache, metadata without checksum and digest, no
    /// persistent history, a rollback journal instead of WAL.
    @Sendable public static func legacyCoreData(_ folder: URL) throws -> URL {
        let store = try bennieGame(folder)
        try StoreShapes.change(store) { db in
            for table in ["Z_MODELCACHE", "ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"] {
                try db.execute(sql: "DROP TABLE \(table)")
            }
            try db.execute(sql: "DELETE FROM Z_PRIMARYKEY WHERE Z_ENT >= 16000")
            let metadata = try StoreReader.metadata(db, path: store.path)
            guard case .dictionary(var entries) = metadata.plist else { return }
            for key in ["NSStoreModelVersionChecksumKey", "NSStoreModelVersionHashesDigest"] { entries[key] = nil }
            try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [BinaryPropertyList.encode(.dictionary(entries))])
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
        }
        return store
    }

    /// An entity table another tool made again with untyped columns: one `Z_PK` and one to-one
    /// key hold TEXT, other columns hold each storage class (a numeric-looking TEXT among them).
    @Sendable public static func untypedTable(_ folder: URL) throws -> URL {
        let store = try bennieGame(folder)
        try StoreShapes.change(store) { db in
            let columns = try db.columns(in: "ZSESSIONMETRICS").map(\.name)
            let list = columns.joined(separator: ", ")
            try db.execute(sql: "CREATE TABLE ZSESSIONMETRICS_NEW (\(list))")
            try db.execute(sql: "INSERT INTO ZSESSIONMETRICS_NEW SELECT \(list) FROM ZSESSIONMETRICS")
            try db.execute(sql: "DROP TABLE ZSESSIONMETRICS")
            try db.execute(sql: "ALTER TABLE ZSESSIONMETRICS_NEW RENAME TO ZSESSIONMETRICS")
            try db.execute(sql: "CREATE INDEX ZSESSIONMETRICS_ZPLAYER_INDEX ON ZSESSIONMETRICS (ZPLAYER)")
            try db.execute(sql: "UPDATE ZSESSIONMETRICS SET Z_PK = 'S-1', ZMISTAKES = '12' WHERE Z_PK = 1")
            try db.execute(sql: "UPDATE ZSESSIONMETRICS SET ZPLAYER = 'player-2', ZCOINSEARNED = 2.5, ZENDTIME = x'00ff' WHERE Z_PK = 2")
        }
        return store
    }

    /// A store its own model describes but for one to-one key that holds TEXT, which no key is:
    /// it goes by its tables, and the TEXT comes back as TEXT.
    @Sendable public static func textToOneKey(_ folder: URL) throws -> URL {
        let store = try StoreShapes.copy("AnyApp/kitchen-sink", into: folder)
        try StoreShapes.change(store) { db in try db.execute(sql: "UPDATE ZRECIPE SET ZAUTHOR = 'author-x' WHERE Z_PK = 1") }
        return store
    }

    /// Another tool's audit trigger and view on an entity table, made before a table the app
    /// added later; the trigger has fired, so its table has rows a restore must not add to, and
    /// its AUTOINCREMENT counter stands above its largest key.
    @Sendable public static func triggerBeforeLaterTable(_ folder: URL) throws -> URL {
        let store = try bennieGame(folder)
        try StoreShapes.change(store) { db in
            try db.execute(sql: "CREATE TABLE audit_log (id INTEGER PRIMARY KEY AUTOINCREMENT, player INTEGER, coins INTEGER)")
            try db.execute(
                sql:
                    "CREATE TRIGGER audit_coins AFTER UPDATE OF ZCOINS ON ZPLAYERDATA BEGIN INSERT INTO audit_log (player, coins) VALUES (new.Z_PK, new.ZCOINS); END"
            )
            try db.execute(sql: "CREATE VIEW rich_players AS SELECT Z_PK, ZNAME FROM ZPLAYERDATA WHERE ZCOINS > 10")
            try db.execute(sql: "UPDATE ZPLAYERDATA SET ZCOINS = ZCOINS + 100")
            // The AUTOINCREMENT counter now stands above the largest key: a restore must keep it.
            try db.execute(sql: "UPDATE ZPLAYERDATA SET ZCOINS = ZCOINS + 1 WHERE Z_PK = 1")
            try db.execute(sql: "DELETE FROM audit_log WHERE id = (SELECT max(id) FROM audit_log)")
            try db.execute(sql: "CREATE TABLE later_settings (key TEXT PRIMARY KEY, value)")
            try db.execute(sql: "INSERT INTO later_settings VALUES ('theme', 'dark'), ('volume', 0.75)")
            try db.execute(
                sql:
                    "CREATE TRIGGER later_settings_touch AFTER INSERT ON later_settings BEGIN UPDATE later_settings SET value = 'touched' WHERE key = new.key; END"
            )
        }
        return store
    }

    /// Full-text and spatial indexes another tool added: fts5 (with a deleted row, so its index
    /// holds more than a fresh insert would write), fts4 and rtree, each with its shadow tables.
    @Sendable public static func virtualTables(_ folder: URL) throws -> URL {
        let store = try bennieGame(folder)
        try StoreShapes.change(store) { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE player_search USING fts5(name, notes)")
            for (index, text) in ["Alexander the brave", "Oliver plays puzzles", "Ada counts coins", "Grace sorts colours"].enumerated() {
                try db.execute(
                    sql: "INSERT INTO player_search (rowid, name, notes) VALUES (?, ?, ?)", arguments: [index + 10, text, "note \(index)"])
            }
            try db.execute(sql: "DELETE FROM player_search WHERE rowid = 11")
            try db.execute(sql: "CREATE VIRTUAL TABLE video_search USING fts4(title)")
            try db.execute(sql: "INSERT INTO video_search (docid, title) VALUES (7, 'counting song'), (9, 'colour song')")
            try db.execute(sql: "CREATE VIRTUAL TABLE play_area USING rtree(id, minX, maxX, minY, maxY)")
            try db.execute(sql: "INSERT INTO play_area VALUES (1, 0, 10, 0, 10), (2, 5, 15, -5, 5), (3, 100, 101, 100, 101)")
            try db.execute(sql: "DELETE FROM play_area WHERE id = 2")
        }
        return store
    }

    /// Header fields another tool set: `user_version` and `application_id`.
    @Sendable public static func headerFields(_ folder: URL) throws -> URL {
        let store = try legacyCoreData(folder)
        try StoreShapes.change(store) { db in
            try db.execute(sql: "PRAGMA user_version = 42")
            try db.execute(sql: "PRAGMA application_id = -1094795586")
        }
        return store
    }

    /// A second metadata row (another Z_VERSION) and the model cache row twice.
    @Sendable public static func extraBookkeepingRows(_ folder: URL) throws -> URL {
        let store = try bennieGame(folder)
        try StoreShapes.change(store) { db in
            try db.execute(
                sql:
                    "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) SELECT 2, 'SECOND', CAST(Z_PLIST || x'00' AS BLOB) FROM Z_METADATA"
            )
            try db.execute(sql: "INSERT INTO Z_MODELCACHE SELECT Z_CONTENT FROM Z_MODELCACHE")
        }
        return store
    }

    /// A store its own model describes, with what another tool adds besides: header fields, a
    /// trigger before a later table, an fts5 table; and in rollback-journal mode.
    @Sendable public static func modelStoreWithExtras(_ folder: URL) throws -> URL {
        let store = try StoreShapes.copy("AnyApp/kitchen-sink", into: folder)
        try StoreShapes.change(store) { db in
            try db.execute(sql: "PRAGMA user_version = 3")
            try db.execute(sql: "PRAGMA application_id = 1364349217")
            try db.execute(sql: "CREATE TABLE recipe_log (id INTEGER PRIMARY KEY, recipe INTEGER)")
            try db.execute(
                sql: "CREATE TRIGGER recipe_logged AFTER UPDATE ON ZRECIPE BEGIN INSERT INTO recipe_log (recipe) VALUES (new.Z_PK); END")
            try db.execute(sql: "CREATE VIRTUAL TABLE recipe_search USING fts5(name)")
            try db.execute(sql: "INSERT INTO recipe_search (rowid, name) SELECT Z_PK, ZNAME FROM ZRECIPE")
            try db.execute(sql: "UPDATE ZRECIPE SET Z_OPT = Z_OPT WHERE Z_PK = 1")
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
        }
        return store
    }
}
