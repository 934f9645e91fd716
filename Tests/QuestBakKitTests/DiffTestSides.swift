import Foundation
import QuestBakTestSupport

@testable import QuestBakKit

/// The sides a diff test pairs for one fixture store: the store, a copy of it and its archive,
/// in a folder of their own.
struct DiffTestSides {
    let directory: TemporaryTestDirectory
    let store: URL
    let copy: URL
    let archive: URL

    init(_ fixture: String) throws {
        directory = try TemporaryTestDirectory()
        store = try directory.copyFixture(fixture)
        copy = try directory.copyFixture(fixture, as: "copy")
        archive = directory.path("a.qbak")
        try Self.export(store, to: archive)
    }

    /// An archive of `store` as the diff tests make one: TimeQuest's profile, created at 0.
    static func export(_ store: URL, to archive: URL) throws {
        var options = Exporter.Options(createdAt: 0)
        options.profiles = [.timeQuest]
        _ = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: options)
    }

    /// What a diff test compares of a listing: the counts, how each entity was matched, the
    /// fields only one side has and every listed line.
    static func lines(of listing: Differ.Listing) throws -> [String] {
        var lines = ["\(listing.result.added) added, \(listing.result.removed) removed, \(listing.result.changed) changed"]
        for entity in listing.result.entities {
            lines.append(
                "\(entity.name) by \(entity.matchedBy): \(entity.added) \(entity.removed) \(entity.changed) "
                    + "\(entity.fieldsOnlyInA) \(entity.fieldsOnlyInB)")
            try listing.forEachLine(of: entity.name) { lines.append(String(describing: $0)) }
        }
        return lines
    }
}
