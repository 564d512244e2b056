/** The throwaway PostgreSQL of the suites; it lives in scripts/lib, where the benchmarks use it too. */
export * from "../../scripts/lib/postgres";
