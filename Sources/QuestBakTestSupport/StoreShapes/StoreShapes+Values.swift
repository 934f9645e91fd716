import Foundation

extension StoreShapes {
    /// Values at the edges of what a column stores.
    public static var values: [StoreShape] { [] }
}
