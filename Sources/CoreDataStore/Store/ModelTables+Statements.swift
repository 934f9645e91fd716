extension ModelTables {
    /// Every `CREATE` statement for the model's own tables, in Core Data's creation order:
    /// entity tables (join tables after them: inferred), then their indexes. Fixture stores are
    /// made from it, and so is a store restored from an archive that carries no statements of its
    /// own (format 1 or 2, written by an app profile's schema); any other store is restored from
    /// the statements its archive carries.
    package var createStatements: [String] {
        tables.map(\.createStatement) + joinTables.map(\.createStatement) + tables.flatMap(\.indexStatements)
            + joinTables.map(\.indexStatement)
    }
}
