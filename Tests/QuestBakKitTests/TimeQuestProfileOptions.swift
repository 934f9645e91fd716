import QuestBakKit

// The library applies no app profile unasked; these tests were written for TimeQuest's stores
// and archives (and any other app's, which the profile leaves alone), as the command line
// handles them: with TimeQuest's profile.
extension Exporter.Options {
    static func timeQuest(createdAt: Int64, compression: ArchiveCompression = .zstd) -> Exporter.Options {
        var options = Exporter.Options(createdAt: createdAt, compression: compression)
        options.profiles = [.timeQuest]
        return options
    }
}

extension Importer.Options {
    static var timeQuest: Importer.Options {
        var options = Importer.Options()
        options.profiles = [.timeQuest]
        return options
    }
}
