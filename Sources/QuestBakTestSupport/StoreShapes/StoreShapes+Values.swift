import Foundation
import GRDB

extension StoreShapes {
    /// Values at the edges of what a column stores, each of which must export and restore
    /// exactly: by the store's model (range and precision limits of Int16, Int32, Float, Double,
    /// dates before 2001 and beyond year 9999, decimals beyond Int64), and kept in their storage
    /// classes (−0.0 in a column without a type, which SQLite keeps, text that is not UTF-8).
    public static var values: [StoreShape] {
        // The subnormal that the literal 1e-320 rounds to, built from its bits: the compiler warns
        // that a literal that small is inexact.
        let subnormal = Double(sign: .plus, exponentBitPattern: 0, significandBitPattern: 2024)
        return [
            StoreShape("values: model types at their limits") { folder in
                try kitchenSink(in: folder) { db in
                    // Int16 and Int32 at both ends, Float's largest, smallest and infinite values
                    // (each exactly a Float), Double's extremes, dates before 2001, at year 1 and
                    // beyond year 9999 (written as a number), decimals beyond Int64 and at its end.
                    try db.execute(
                        sql: """
                            UPDATE ZRECIPE SET ZRATINGCOUNT = -32768, ZSERVINGS = 2147483647, ZSWEETNESS = ?, ZRATING = ?,
                                ZCREATEDAT = -63113904000, ZCOST = 9223372036854775807 WHERE Z_PK = 1
                            """, arguments: [Double(Float.greatestFiniteMagnitude), -Double.greatestFiniteMagnitude])
                    try db.execute(
                        sql: """
                            UPDATE ZRECIPE SET ZRATINGCOUNT = 32767, ZSERVINGS = -2147483648, ZSWEETNESS = ?, ZRATING = ?,
                                ZCREATEDAT = ?, ZCOST = ? WHERE Z_PK = 2
                            """, arguments: [-Double(Float.leastNonzeroMagnitude), Double.leastNonzeroMagnitude, 1e15, 1e300])
                    try db.execute(
                        sql: "UPDATE ZRECIPE SET ZSWEETNESS = ?, ZRATING = ?, ZCREATEDAT = ?, ZCOST = ? WHERE Z_PK = 3",
                        arguments: [Double(Float.infinity), -Double.infinity, -978_307_200.000_001, -1e-300])
                }
            },
            StoreShape("values: by tables, -0.0 untyped and text that is not UTF-8") { folder in
                try kitchenSink(in: folder) { db in
                    // A column the model does not explain: the store goes by its tables.
                    try db.execute(sql: "ALTER TABLE ZRECIPE ADD COLUMN ZEXTRA")
                    try db.execute(sql: "UPDATE ZRECIPE SET ZEXTRA = ? WHERE Z_PK = 1", arguments: [-0.0])
                    try db.execute(sql: "UPDATE ZRECIPE SET ZEXTRA = CAST(X'FF00C328' AS TEXT) WHERE Z_PK = 2")
                    try db.execute(
                        sql: "UPDATE ZRECIPE SET ZEXTRA = ?, ZMEMO = CAST(X'C0AF' AS TEXT) WHERE Z_PK = 3", arguments: [subnormal])
                }
            },
            StoreShape("values: another tool's table at the edges, beside a model") { folder in
                try kitchenSink(in: folder) { db in
                    try db.execute(sql: "CREATE TABLE edge_values (id INTEGER PRIMARY KEY, untyped, real REAL, text TEXT, number NUMERIC)")
                    let rows: [[DatabaseValueConvertible?]] = [
                        [1, -0.0, Double.infinity, "", 1.5],
                        [2, Int64.min, -Double.infinity, nil, Int64.max],
                        [3, Data([0xFF, 0x00]), subnormal, "Infinity", 1e300],
                        [4, "-0", 0.0, "1.0", -9_007_199_254_740_993],
                    ]
                    for row in rows {
                        try db.execute(sql: "INSERT INTO edge_values VALUES (?, ?, ?, ?, ?)", arguments: StatementArguments(row))
                    }
                    try db.execute(sql: "INSERT INTO edge_values (id, text) VALUES (5, CAST(X'80' AS TEXT))")
                }
            },
        ]
    }

    /// A copy of the kitchen-sink fixture (every attribute type, a WAL, an external file), changed
    /// by `change` in one transaction.
    static func kitchenSink(in folder: URL, _ edit: (Database) throws -> Void) throws -> URL {
        let store = try copy("AnyApp/kitchen-sink", into: folder)
        try change(store) { db in
            try db.inTransaction {
                try edit(db)
                return .commit
            }
        }
        return store
    }
}
