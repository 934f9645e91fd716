import Crypto
import Foundation
import QuestBakFixtures
import QuestBakKit

/// Builds archives by hand, as the format document tells any other program to, with the system
/// `tar` and `zstd` (gzip in the portable build): crafted inputs for import tests, independent of questbak's own writer.
public struct ArchiveBuilder {
    public struct Member {
        public var name: String
        /// Record lines (JSON text, no newline).
        public var records: [String]
        /// The header line; `nil` writes the standard one.
        public var header: String?
        /// `Z_MAX`; nil gives the largest `_pk` among the records, as a consistent store has.
        public var maximumPrimaryKey: Int64?

        public init(_ name: String, records: [String], header: String? = nil) {
            self.name = name
            self.records = records
            self.header = header
        }
    }

    public var schemaVersion: String?
    public var formatVersion = 1
    public var createdAt = "2026-01-01T00:00:00Z"
    public var schemaKind = ArchiveManifest.Source.knownSchema
    public var members: [Member] = []
    /// Entities of the schema left out of the archive altogether (to test that this is refused).
    public var omittedEntities: Set<String> = []
    /// Applied to the manifest object last, to make it lie.
    public var editManifest: (inout [String: Any]) -> Void = { _ in }
    /// Applied to a member's bytes after the manifest was computed, to damage it.
    public var damageMember: (String, inout Data) -> Void = { _, _ in }

    /// Whether the archive carries `store/metadata.plist`, as every export does (early tools
    /// wrote none, and a restore then computes the metadata, a change it reports).
    public var carriesMetadata = true
    /// The bytes of `store/metadata.plist`; nil: the metadata a store of the schema has.
    public var metadataBytes: Data?

    /// The metadata member's bytes, when the archive has one.
    var metadataMember: Data? {
        guard carriesMetadata else { return nil }
        if let metadataBytes { return metadataBytes }
        return schema.map { StoreMetadata(model: CompiledModel(schema: $0), uuid: Self.storeUUID).encodedPlist }
    }

    static let storeUUID = "00000000-0000-4000-8000-000000000001"

    public init(schemaVersion: String?) {
        self.schemaVersion = schemaVersion
    }

    /// Record lines that leave out a property of a known schema get it as null, as questbak
    /// writes them; off, to test that a missing key is refused.
    public var fillMissingKeys = true

    var schema: Schema? {
        guard schemaKind == ArchiveManifest.Source.knownSchema else { return nil }
        return TimeQuestSchemas.declarations.first { $0.versionIdentifier == (schemaVersion ?? "1.0.0") }
    }

    func completed(_ line: String, entity: String) -> String {
        guard fillMissingKeys, let names = schema?.entity(named: entity)?.storedPropertyNames,
            var object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        else { return line }
        for name in names where object[name] == nil { object[name] = NSNull() }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return line }
        return String(decoding: data, as: UTF8.self)
    }

    func largestPrimaryKey(_ member: Member) -> Int64 {
        member.records.compactMap { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["_pk"] as? Int64
        }.max() ?? 0
    }

    public func memberBytes(_ member: Member) -> Data {
        let header =
            member.header
            ?? {
                let version = schemaVersion.map { "\"schemaVersion\":\"\($0)\"," } ?? ""
                return "{\(version)\"entity\":\"\(member.name)\",\"count\":\(member.records.count)}"
            }()
        return Data(([header] + member.records.map { completed($0, entity: member.name) }).map { $0 + "\n" }.joined().utf8)
    }

    /// A known TimeQuest schema's entities that `members` leaves out, as empty members: the
    /// format wants every entity of a known schema listed.
    var completedMembers: [Member] {
        guard let schema else { return members }
        let given = Set(members.map(\.name))
        return members
            + schema.entities.filter { !given.contains($0.name) && !omittedEntities.contains($0.name) }.map { Member($0.name, records: []) }
    }

    public func write(to archive: URL) throws {
        let members = completedMembers
        let staging = archive.deletingLastPathComponent().appendingPathComponent(".build-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: staging.appendingPathComponent("entities"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: staging) }
        var entities: [[String: Any]] = []
        for member in members {
            var data = memberBytes(member)
            entities.append([
                "name": member.name, "path": "entities/\(member.name).jsonl", "count": member.records.count,
                "maximumPrimaryKey": member.maximumPrimaryKey ?? largestPrimaryKey(member), "bytes": data.count,
                "sha256": SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined(),
            ])
            damageMember(member.name, &data)
            try data.write(to: staging.appendingPathComponent("entities/\(member.name).jsonl"))
        }
        var files: [[String: Any]] = []
        if let metadata = metadataMember {
            try FileManager.default.createDirectory(at: staging.appendingPathComponent("store"), withIntermediateDirectories: true)
            try metadata.write(to: staging.appendingPathComponent(ArchiveManifest.metadataPath))
            files.append([
                "path": ArchiveManifest.metadataPath, "bytes": metadata.count,
                "sha256": SHA256.hash(data: metadata).map { String(format: "%02x", $0) }.joined(),
            ])
        }
        var manifest: [String: Any] = [
            "format": "questbak-archive", "formatVersion": formatVersion, "createdAt": createdAt,
            "tool": ["name": "test", "version": "0"],
            "source": [
                "storeUUID": Self.storeUUID, "versionIdentifiers": [schemaVersion ?? "1.0.0"], "walFrames": 0, "schema": schemaKind,
            ],
            "entities": entities, "files": files, "bookkeepingRows": [:],
        ]
        if let schemaVersion { manifest["schemaVersion"] = schemaVersion }
        editManifest(&manifest)
        try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(
            to: staging.appendingPathComponent("manifest.json"))
        let names = ["manifest.json"] + members.map { "entities/\($0.name).jsonl" } + files.compactMap { $0["path"] as? String }
        let status = try Questbak.runProcess(
            "/usr/bin/env",
            ["tar", ArchiveCompression.zstd.isAvailable ? "--zstd" : "--gzip", "--format=ustar", "-cf", archive.path, "-C", staging.path]
                + names)
        guard status == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
}

/// Record lines for crafted archives, with every property of a V1 record filled unless
/// overridden; `nil` in `overrides` removes the key.
public enum RecordLines {
    public static func routine(_ pk: Int, _ overrides: [String: Any?] = [:]) -> String {
        line(
            pk,
            [
                "name": "r\(pk)", "displayName": "Routine \(pk)", "activeDays": [2, 3], "isActive": true,
                "createdAt": "2025-01-0\(pk % 9 + 1)T08:00:00Z", "updatedAt": "2025-02-01T08:00:00Z",
            ], overrides)
    }

    public static func task(_ pk: Int, routine: Int?, _ overrides: [String: Any?] = [:]) -> String {
        line(
            pk,
            [
                "name": "t\(pk)", "displayName": "Task \(pk)", "referenceDurationSeconds": NSNull(), "orderIndex": pk,
                "routine": routine.map { $0 as Any } ?? NSNull(),
            ], overrides)
    }

    public static func session(_ pk: Int, routine: Int?, _ overrides: [String: Any?] = [:]) -> String {
        line(
            pk,
            [
                "startedAt": "2025-03-0\(pk % 9 + 1)T07:00:00Z", "completedAt": NSNull(), "isCalibration": false, "xpEarned": 10,
                "routine": routine.map { $0 as Any } ?? NSNull(),
            ], overrides)
    }

    public static func estimation(_ pk: Int, session: Int?, _ overrides: [String: Any?] = [:]) -> String {
        line(
            pk,
            [
                "taskDisplayName": "Task \(pk)", "estimatedSeconds": 60.5, "actualSeconds": 70.25, "differenceSeconds": 9.75,
                "accuracyPercent": 86.1, "ratingRawValue": "close", "orderIndex": pk, "recordedAt": "2025-03-01T07:0\(pk % 10):00Z",
                "session": session.map { $0 as Any } ?? NSNull(),
            ], overrides)
    }

    public static func profile(_ pk: Int, _ overrides: [String: Any?] = [:]) -> String {
        line(
            pk,
            [
                "totalXP": 100, "currentStreak": 3, "lastPlayedDate": "2025-03-01T07:00:00Z", "notificationsEnabled": true,
                "notificationHour": 7, "notificationMinute": 30, "soundEnabled": true, "createdAt": "2025-01-01T00:00:00Z",
            ], overrides)
    }

    public static func line(_ pk: Int, _ base: [String: Any], _ overrides: [String: Any?]) -> String {
        var object = base
        object["_pk"] = pk
        for (key, value) in overrides {
            if let value { object[key] = value } else { object.removeValue(forKey: key) }
        }
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}
