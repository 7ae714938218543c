# benchratio.awk: reads `go test -bench -benchmem` output (several -count
# rounds) and prints, per benchmark, the best ns/op and allocs/op and the
# ratio to its baseline in the same run: "raw" for Publish and
# PublishContext, "rawMsg" for PublishMsg and PublishMsgContext,
# "raw+header" for Client.Request, "raw" for Respond.
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	ns = 0; allocs = 0
	for (i = 2; i <= NF; i++) {
		if ($(i) == "ns/op") ns = $(i-1)
		if ($(i) == "allocs/op") allocs = $(i-1)
	}
	if (!(name in best) || ns < best[name]) best[name] = ns
	al[name] = allocs
	if (!(name in seen)) { order[++n] = name; seen[name] = 1 }
}
END {
	for (k = 1; k <= n; k++) {
		name = order[k]; grp = name; sub(/\/[^\/]*$/, "", grp); call = name; sub(/^.*\//, "", call)
		base = ""
		if (call == "Publish" || call == "PublishContext") base = grp "/raw"
		if (call == "PublishMsg" || call == "PublishMsgContext") base = grp "/rawMsg"
		if (call == "Client.Request") base = grp "/raw+header"
		if (call == "Respond") base = grp "/raw"
		if (base != "" && (base in best) && best[base] > 0)
			printf "%-70s %10.1f ns/op %4d allocs  %.2fx (allocs %+d)\n", name, best[name], al[name], best[name] / best[base], al[name] - al[base]
		else
			printf "%-70s %10.1f ns/op %4d allocs  (baseline)\n", name, best[name], al[name]
	}
}
