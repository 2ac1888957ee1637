package store

// ListQueries renders List's statements for the plan tests.
var ListQueries = listQueries

// StrandedSQL is Stranded's statement.
const StrandedSQL = strandedSQL
