# benchratio.awk: reads `go test -bench -benchmem` output (several -count
# rounds, each starting with a "goos:" line) and prints, per benchmark,
# the best ns/op and allocs/op, the ratio of the best to its baseline's
# best, and the median over the rounds of the ratio to the baseline in
# the same round (on a noisy machine the best of a few rounds is itself
# noisy; a round's pair ran minutes apart at most). Baselines: "raw" for Publish and
# PublishContext, "rawMsg" for PublishMsg and PublishMsgContext,
# "raw+header" for Client.Request, "raw" for Respond; rawMsgAgain, the
# raw call timed again, against rawMsg (the measurement's own spread).
/^goos:/ { round++ }
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	ns = 0; allocs = 0
	for (i = 2; i <= NF; i++) {
		if ($(i) == "ns/op") ns = $(i-1)
		if ($(i) == "allocs/op") allocs = $(i-1)
	}
	if (!(name in best) || ns < best[name]) best[name] = ns
	ns_in[name, round] = ns
	al[name] = allocs
	if (!(name in seen)) { order[++n] = name; seen[name] = 1 }
}
# pairedMedian returns the median over the rounds of name's ns/op over
# base's in the same round.
function pairedMedian(name, base,    m, r, i, j, v, tmp) {
	m = 0
	for (r = 0; r <= round; r++)
		if (((name, r) in ns_in) && ((base, r) in ns_in) && ns_in[base, r] > 0)
			tmp[++m] = ns_in[name, r] / ns_in[base, r]
	for (i = 2; i <= m; i++) {
		v = tmp[i]
		for (j = i - 1; j >= 1 && tmp[j] > v; j--) tmp[j+1] = tmp[j]
		tmp[j+1] = v
	}
	if (m == 0) return 0
	if (m % 2) return tmp[(m+1)/2]
	return (tmp[m/2] + tmp[m/2+1]) / 2
}
END {
	for (k = 1; k <= n; k++) {
		name = order[k]; grp = name; sub(/\/[^\/]*$/, "", grp); call = name; sub(/^.*\//, "", call)
		base = ""
		if (call == "Publish" || call == "PublishContext") base = grp "/raw"
		if (call == "PublishMsg" || call == "PublishMsgContext" || call == "rawMsgAgain") base = grp "/rawMsg"
		if (call == "Client.Request") base = grp "/raw+header"
		if (call == "Respond") base = grp "/raw"
		if (base != "" && (base in best) && best[base] > 0)
			printf "%-70s %10.1f ns/op %4d allocs  best %.2fx  paired median %.2fx (allocs %+d)\n", name, best[name], al[name], best[name] / best[base], pairedMedian(name, base), al[name] - al[base]
		else
			printf "%-70s %10.1f ns/op %4d allocs  (baseline)\n", name, best[name], al[name]
	}
}
