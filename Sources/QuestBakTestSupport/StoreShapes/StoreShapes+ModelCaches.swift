import Foundation

extension StoreShapes {
    /// Stores whose model caches use every form Core Data writes.
    public static var modelCaches: [StoreShape] { [] }
}
