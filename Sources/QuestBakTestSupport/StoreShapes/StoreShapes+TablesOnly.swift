import Foundation

extension StoreShapes {
    /// Stores described by their tables (no model cache, or one that does not explain them).
    public static var tablesOnly: [StoreShape] { [] }
}
