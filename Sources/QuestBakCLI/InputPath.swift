import Foundation

/// Paths from the command line checked before a command starts, so a missing or wrong kind of
/// input is one sentence and exit 66 rather than a Foundation error.
enum InputPath {
    /// The error to throw for a path that is missing or of the wrong kind; `reportingFailures`
    /// prints it (as JSON too under --json) and ends with `status`.
    static func fail(_ status: ExitStatus, _ message: String) -> CommandLineInputError {
        CommandLineInputError(status: status, message: message)
    }

    static func schemaFile(_ path: String) throws -> URL {
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw fail(.noInput, "\(url.path): no such schema file")
        }
        if isDirectory.boolValue {
            throw fail(.noInput, "\(url.path): is a folder; a schema file (JSON, see `questbak schema`) is expected")
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw fail(.noInput, "\(url.path): the schema file cannot be read")
        }
        return url
    }

    static func fixturesFolder(_ path: String) throws -> URL {
        let url = URL(fileURLWithPath: path, isDirectory: true)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw fail(.noInput, "\(url.path): no such folder (--fixtures names the folder of fixture stores)")
        }
        guard isDirectory.boolValue else {
            throw fail(
                .noInput,
                "\(url.path): is a file, not a folder; --fixtures expects a folder of fixture stores (files named *.store directly "
                    + "in it or in its subfolders one level down), such as \(url.deletingLastPathComponent().path)")
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw fail(.noInput, "\(url.path): the fixtures folder cannot be read")
        }
        return url
    }
}
