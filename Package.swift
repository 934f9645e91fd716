// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "questbak",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "QuestBakKit", targets: ["QuestBakKit"]),
        .executable(name: "questbak", targets: ["questbak"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
    ],
    targets: [
        // libarchive, from Debian's libarchive-dev: tar writing and reading with zstd and gzip filters.
        .systemLibrary(
            name: "CArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"])]
        ),
        .target(
            name: "QuestBakKit",
            dependencies: [
                "CArchive",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for reading and binding TEXT with exact byte lengths (StoredValue).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .executableTarget(
            name: "questbak",
            dependencies: [
                "QuestBakKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .executableTarget(
            name: "questbak-fixtures",
            dependencies: ["QuestBakKit"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // The archive reader's fuzz campaign: `swift run -c release questbak-fuzz --iterations 10000`.
        .executableTarget(
            name: "questbak-fuzz",
            dependencies: ["QuestBakKit"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .target(
            name: "QuestBakTestSupport",
            dependencies: ["QuestBakKit", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "QuestBakKitTests",
            dependencies: ["QuestBakKit", "QuestBakTestSupport", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "questbakTests",
            dependencies: ["questbak", "questbak-fixtures", "QuestBakTestSupport", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ]
)
