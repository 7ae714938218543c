package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/natssend/natssend/analyzer"
)

func main() {
	singlechecker.Main(analyzer.Analyzer)
}
