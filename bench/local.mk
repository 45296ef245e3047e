# Benchmarks (`make bench`): programs, never timed assertions in tests.
