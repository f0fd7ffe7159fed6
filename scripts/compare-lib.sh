# Shared by scripts/parallel-check*.sh: `pslab compare` of two result
# directories, and the legend of its table in their README.md. Source it.

# compare_rows PSLAB A B OUT writes OUT/compare.md (OUT/compare.png/.svg
# beside it) and OUT/compare.csv: B/A per row.
compare_rows() {
  "$1" compare "$2" "$3" --plot "$4" >"$4/compare.md"
  "$1" compare "$2" "$3" --format csv >"$4/compare.csv"
}

# compare_legend prints what the columns of compare.md mean.
compare_legend() {
  echo "B/A = parallel / alone, per row: the ratio of geometric means over the"
  echo "repetitions with its 95 % CI (Welch's t on log values), the p-value, and the"
  echo "verdict (same: TOST within ±10 %; differs: the CI excludes 1; else"
  echo "inconclusive). Plot: compare.png / compare.svg; CSV: compare.csv."
}
