import Foundation

extension StoreShapes {
    /// External-storage files of every size and name export accepts, and support folders whose
    /// links export leaves out (with a warning) rather than follows.
    public static var externalStorage: [StoreShape] {
        [
            StoreShape("external storage: a file of several MiB that does not compress") { folder in
                let store = try kitchenSink(in: folder)
                try pseudoRandomBytes(3 * 1024 * 1024 + 777).write(to: externalDataFolder(of: store).appendingPathComponent(photoName))
                return store
            },
            StoreShape("external storage: a file named with 255 bytes (NAME_MAX)") { folder in
                let store = try kitchenSink(in: folder)
                let name = String(repeating: "L", count: 250) + "-5.db"
                try pseudoRandomBytes(4096).write(to: externalDataFolder(of: store).appendingPathComponent(name))
                return store
            },
            StoreShape("external storage: two names that differ only in case, the second left out with a warning") { folder in
                let store = try kitchenSink(in: folder)
                try Data("upper".utf8).write(to: externalDataFolder(of: store).appendingPathComponent("NOTE"))
                try Data("lower".utf8).write(to: externalDataFolder(of: store).appendingPathComponent("note"))
                return store
            },
            StoreShape("external storage: _EXTERNAL_DATA a link to another folder, left out with a warning") { folder in
                let store = try kitchenSink(in: folder)
                let elsewhere = folder.appendingPathComponent("elsewhere")
                try FileManager.default.moveItem(at: externalDataFolder(of: store), to: elsewhere)
                try FileManager.default.createSymbolicLink(at: externalDataFolder(of: store), withDestinationURL: elsewhere)
                return store
            },
            StoreShape("external storage: the support folder a link, left out with a warning") { folder in
                let store = try kitchenSink(in: folder)
                let support = externalDataFolder(of: store).deletingLastPathComponent()
                let elsewhere = folder.appendingPathComponent("elsewhere")
                try FileManager.default.moveItem(at: support, to: elsewhere)
                try FileManager.default.createSymbolicLink(at: support, withDestinationURL: elsewhere)
                return store
            },
        ]
    }

    /// The kitchen-sink fixture's one externally stored photo.
    private static let photoName = "85119BD1-9242-445A-9557-A0E0B987FF95"

    /// A copy of the kitchen-sink fixture (any app's store with an external-storage file) in `folder`.
    private static func kitchenSink(in folder: URL) throws -> URL { try copy("AnyApp/kitchen-sink", into: folder) }

    private static func externalDataFolder(of store: URL) -> URL {
        store.deletingLastPathComponent().appendingPathComponent(".default_SUPPORT/_EXTERNAL_DATA")
    }

    /// Bytes that do not compress (SplitMix64), the same on every run for one seed.
    public static func pseudoRandomBytes(_ count: Int, seed: UInt64 = 0x2023) -> Data {
        var state = seed
        var data = Data(capacity: count + 8)
        while data.count < count {
            state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            mixed ^= mixed >> 31
            withUnsafeBytes(of: mixed.littleEndian) { data.append(contentsOf: $0) }
        }
        return data.prefix(count)
    }
}
