import Crypto
import Foundation

/// Takes an archive apart with the system `tar`, lets a test change its members, and packs it
/// again with every size and SHA-256 in the manifest made right, members in their first order:
/// an archive whose checksums all agree, so that what a reader refuses is the change itself.
public enum ArchiveRepack {
    public static func repack(_ archive: URL, to output: URL, _ edit: (_ folder: URL) throws -> Void) throws {
        let folder = output.deletingLastPathComponent().appendingPathComponent(".repack-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let listing = try Questbak.runTool(["tar", "-tf", archive.path])
        let unpacked = try Questbak.runTool(["tar", "-xf", archive.path, "-C", folder.path])
        guard listing.status == 0, unpacked.status == 0 else { throw CocoaError(.fileReadCorruptFile) }
        try edit(folder)
        let manifestURL = folder.appendingPathComponent("manifest.json")
        guard var manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any] else {
            throw CocoaError(.fileReadCorruptFile)
        }
        for key in ["entities", "tables", "files"] {
            guard var members = manifest[key] as? [[String: Any]] else { continue }
            for index in members.indices {
                guard let path = members[index]["path"] as? String else { continue }
                let data = try Data(contentsOf: folder.appendingPathComponent(path))
                members[index]["bytes"] = data.count
                members[index]["sha256"] = SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
            }
            manifest[key] = members
        }
        try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys, .prettyPrinted]).write(to: manifestURL)
        let names = listing.standardOutput.split(separator: "\n").map(String.init)
        let packed = try Questbak.runTool(["tar", "--zstd", "--format=ustar", "-cf", output.path, "-C", folder.path] + names)
        guard packed.status == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    /// Replaces, in the line of `member` whose `_pk` is `primaryKey` (or, for a table member, the
    /// line `lineNumber`), the JSON value of `key` with `json`, byte for byte: the rest of the line
    /// keeps the spelling export gave it.
    public static func setValue(
        in folder: URL, member: String, primaryKey: Int64? = nil, lineNumber: Int? = nil, key: String, json: String
    ) throws {
        let url = folder.appendingPathComponent(member)
        var lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        guard
            let index = lineNumber.map({ $0 - 1 }) ?? lines.firstIndex(where: { $0.hasPrefix("{\"_pk\":\(primaryKey ?? 0),") }),
            lines.indices.contains(index)
        else { throw CocoaError(.fileReadUnknown) }
        let line = lines[index]
        guard let keyRange = line.range(of: "\"\(key)\":") else { throw CocoaError(.fileReadUnknown) }
        // The value runs to the next `,"` or the closing brace at its level: strings with such
        // text are not edited by the tests that use this.
        let rest = line[keyRange.upperBound...]
        let end = valueEnd(in: rest)
        lines[index] = String(line[..<keyRange.upperBound]) + json + String(rest[end...])
        try lines.joined(separator: "\n").write(to: url, atomically: true, encoding: .utf8)
    }

    static func valueEnd(in text: Substring) -> Substring.Index {
        var depth = 0
        var inString = false
        var escaped = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if inString {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString = false
                }
            } else {
                switch character {
                case "\"": inString = true
                case "{", "[": depth += 1
                case "}", "]":
                    if depth == 0 { return index }
                    depth -= 1
                case ",":
                    if depth == 0 { return index }
                default: break
                }
            }
            index = text.index(after: index)
        }
        return index
    }
}
