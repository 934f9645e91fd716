import Foundation

public enum TemporaryDirectory {
    /// A new private directory (mode 0700) under the system temporary directory.
    public static func create(prefix: String, in parent: URL? = nil) throws -> URL {
        let base = parent ?? FileManager.default.temporaryDirectory
        var template = Array(base.appendingPathComponent("\(prefix).XXXXXX").path.utf8CString)
        guard let result = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw StoreError.io(path: base.path, reason: "cannot create a temporary directory: \(String(cString: strerror(errno)))")
        }
        return URL(fileURLWithPath: String(cString: result), isDirectory: true)
    }
}
