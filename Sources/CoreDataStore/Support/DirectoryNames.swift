import Foundation

/// The names in a folder that start with one of a few prefixes, read with `readdir`.
///
/// Why not `FileManager.contentsOfDirectory`: every command looks through the system's temporary
/// folder for what killed runs left (`TemporaryDirectory.removeStale`), and that folder may hold
/// thousands of other programs' entries. `contentsOfDirectory` makes a `String` of each of them;
/// here a name's bytes are compared with the prefixes first, and only a match becomes a `String`
/// (docs/performance.md, "another app's export, the fixed costs").
package enum DirectoryNames {
    /// The names (not "." or "..") in `path` whose UTF-8 bytes start with one of `prefixes`', in
    /// the order the folder lists them; nil when the folder cannot be opened.
    package static func starting(with prefixes: [String], in path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        let wanted = prefixes.map { Array($0.utf8) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name: String? = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                let bytes = raw.bindMemory(to: UInt8.self)
                let length = strnlen(raw.baseAddress!.assumingMemoryBound(to: CChar.self), raw.count)
                let nameBytes = UnsafeBufferPointer(rebasing: bytes[0..<length])
                guard wanted.contains(where: { nameBytes.starts(with: $0) }) else { return nil }
                return String(decoding: nameBytes, as: UTF8.self)
            }
            if let name, name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}
