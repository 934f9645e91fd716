import XCTest

@testable import QuestBakCLI

final class MallocSettingsTests: XCTestCase {
    /// The merge's steady peak rests on glibc taking the setting: `mallopt` found by name, and
    /// the size accepted (glibc refuses one above 32 MB). A lookup that fails, or a parameter
    /// glibc does not know, fails here.
    func testGlibcTakesTheLargeBlockSize() throws {
        #if canImport(Glibc)
            XCTAssertTrue(MallocSettings.keepLargeBlocksMapped())
        #else
            throw XCTSkip("malloc is not glibc's")
        #endif
    }
}
