import Foundation

extension StoreShapes {
    /// External-storage files of every size and name export accepts.
    public static var externalStorage: [StoreShape] { [] }
}
