import Foundation

extension StoreShapes {
    /// Core Data's bookkeeping as other tools and old bugs leave it: a `Z_MAX` that is NULL or
    /// below a key in use (a restore raises it, and says so).
    public static var bookkeeping: [StoreShape] {
        [
            fixtureEdited("Z_MAX NULL", fixture: "v2-typical", "UPDATE Z_PRIMARYKEY SET Z_MAX = NULL WHERE Z_NAME = 'GameSession'"),
            fixtureEdited("Z_MAX below a key in use", fixture: "AnyApp/kitchen-sink", "UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_MAX > 1"),
        ]
    }

    /// A copy of a committed fixture (WAL included) changed by one SQL script, committed into
    /// the copy's main file.
    public static func fixtureEdited(_ name: String, fixture: String, _ sql: String) -> StoreShape {
        StoreShape("\(fixture), \(name)") { folder in
            let store = try copy(fixture, into: folder)
            try change(store) { try $0.execute(sql: sql) }
            return store
        }
    }
}
