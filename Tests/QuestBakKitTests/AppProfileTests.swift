import Foundation
import QuestBakKit
import QuestBakTestSupport
import XCTest

/// An app profile is what questbak knows of an app that its models cannot say. The library
/// applies one only when its caller passes it; the command line passes TimeQuest's.
final class AppProfileTests: XCTestCase {
    /// A copy of a TimeQuest fixture (the committed one is never opened in place).
    func timeQuestStore(_ fixture: String, in directory: TemporaryTestDirectory) throws -> URL {
        let folder = directory.path(fixture)
        try FileManager.default.copyItem(at: Repository.fixtures.appendingPathComponent(fixture), to: folder)
        return folder.appendingPathComponent("default.store")
    }

    func testTheLibraryAppliesNoProfileUnasked() throws {
        let directory = try TemporaryTestDirectory()
        let store = try timeQuestStore("v2-typical", in: directory)
        var byModelOptions = Exporter.Options(createdAt: 1_767_225_600, compression: .none)
        // The archive is proved to give the store back: the model path backs a TimeQuest store
        // up as well as its profile does.
        byModelOptions.verify = true
        let byModel = try Exporter.export(
            storeAt: store, to: .file(directory.path("model.qbak"), overwrite: false), options: byModelOptions)
        XCTAssertEqual(byModel.schema, ArchiveManifest.Source.modelSchema, "without a profile, a store is read by the model it carries")
        XCTAssertNotNil(byModel.verification)

        var options = Exporter.Options(createdAt: 1_767_225_600, compression: .none)
        options.profiles = [.timeQuest]
        let byProfile = try Exporter.export(storeAt: store, to: .file(directory.path("timequest.qbak"), overwrite: false), options: options)
        XCTAssertEqual(byProfile.schema, ArchiveManifest.Source.knownSchema)
        XCTAssertEqual(byProfile.schemaVersion, "2.0.0")
    }

    func testAnArchiveOfAProfilesSchemaRestoresOnlyWithTheProfile() throws {
        let directory = try TemporaryTestDirectory()
        let store = try timeQuestStore("v1-typical", in: directory)
        let archive = directory.path("v1.qbak")
        var export = Exporter.Options(createdAt: 1_767_225_600, compression: .none)
        export.profiles = [.timeQuest]
        _ = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: export)
        let work = directory.path("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)

        try FileManager.default.createDirectory(at: directory.path("none"), withIntermediateDirectories: true)
        XCTAssertThrowsError(
            try Importer.run(
                archive: archive.path, into: directory.path("none/default.store"), options: Importer.Options(), workDirectory: work)
        ) { error in
            guard case ImportError.notImportable(_, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("no app profile"), reason)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("none/default.store").path), "no partial output")

        var restore = Importer.Options()
        restore.profiles = [.timeQuest]
        try FileManager.default.createDirectory(at: directory.path("restored"), withIntermediateDirectories: true)
        let result = try Importer.run(
            archive: archive.path, into: directory.path("restored/default.store"), options: restore, workDirectory: work)
        XCTAssertEqual(result.sourceSchemaVersion, "1.0.0")
    }

    /// The profile's versions are the fixtures' models: the store's hashes pick the version, and
    /// the profile applied to the store's own model gives what TimeQuest's schema says and the
    /// model cannot (natural keys, the singleton, `[Int]` for `activeDays`).
    func testTheProfileAddsToAStoresOwnModelWhatTheModelCannotSay() throws {
        let directory = try TemporaryTestDirectory()
        for (fixture, version) in [("v1-typical", "1.0.0"), ("v2-typical", "2.0.0")] {
            let store = try timeQuestStore(fixture, in: directory)
            let (metadata, cache) = try StoreSnapshot(storeAt: store).read {
                (try StoreReader.metadata($0, path: store.path), try StoreReader.modelCache($0))
            }
            XCTAssertEqual(metadata.versionMatchingHashes(in: AppProfile.timeQuest.versions)?.versionIdentifier, version)
            let ownModel = Schema(model: try ModelCacheDecoder.decode(try XCTUnwrap(cache, "\(fixture) has a model cache")))
            XCTAssertEqual(ownModel.entity(named: "Routine")?.attribute(named: "activeDays")?.kind, .transformable)
            XCTAssertEqual(ownModel.identity(of: "PlayerProfile").singletonCloudID, nil, "no model names a singleton")

            let known = try XCTUnwrap(AppProfile.timeQuest.declaration(version))
            let applied = AppProfile.timeQuest.applied(to: ownModel)
            XCTAssertEqual(applied.entities.map(\.name), known.entities.map(\.name))
            for entity in known.entities {
                XCTAssertEqual(applied.identity(of: entity.name), known.identity(of: entity.name), "\(fixture): \(entity.name)")
            }
            XCTAssertEqual(applied.entity(named: "Routine")?.attribute(named: "activeDays")?.kind, .integerArray)
            XCTAssertEqual(applied.identity(of: "PlayerProfile").singletonCloudID, TimeQuestSchemas.playerProfileCloudID)
        }
    }

    /// A schema file's proposed version joins the profile as its newest, keeping the natural keys
    /// the file states.
    func testAddingAVersionKeepsItsOwnIdentities() throws {
        var proposed = TimeQuestSchemas.v2
        proposed.versionIdentifier = "3.0.0"
        proposed.identities["Routine"] = Identity(naturalKey: ["name"])
        let profile = AppProfile.timeQuest.addingVersion(proposed)
        XCTAssertEqual(profile.versions.map(\.versionIdentifier), ["1.0.0", "2.0.0", "3.0.0"])
        XCTAssertEqual(profile.newest?.identity(of: "Routine").naturalKey, ["name"])
        XCTAssertEqual(profile.version("2.0.0")?.identity(of: "Routine").naturalKey, ["name", "createdAt"])
    }
}
