package client

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/sim/hw"
)

// resultName is a figure's name in the calibration script's output.
var resultName = regexp.MustCompile(`\b(?:pg|my|java|loopback|split|fit)_[a-z0-9_]+\b`)

// Every default price has a source, and the figures a source cites are
// lines of the results file checked in beside the script.
func TestDefaultParamSources(t *testing.T) {
	require.NoError(t, DefaultParams.Validate())
	require.Contains(t, DefaultParams.Source, DefaultParamsResults)

	f, err := os.Open(filepath.Join("calibrate", DefaultParamsResults))
	require.NoError(t, err)
	defer f.Close()
	lines := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) > 0 && !strings.HasPrefix(fs[0], "#") {
			lines[fs[0]] = true
		}
	}
	require.NoError(t, sc.Err())

	typ := reflect.TypeOf(Params{})
	cited := 0
	for i := range typ.NumField() {
		name := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
		if name == "source" {
			continue
		}
		src, ok := DefaultParamSources[name]
		require.True(t, ok, "no source for %s", name)
		for _, n := range resultName.FindAllString(src, -1) {
			require.True(t, lines[n], "%s cites %s, which %s does not have", name, n, DefaultParamsResults)
			cited++
		}
	}
	require.Len(t, DefaultParamSources, typ.NumField()-1, "a source for every price and no other")
	require.Positive(t, cited)
}

// Validate refuses a negative price and one above hw.MaxCPUCost.
func TestValidate(t *testing.T) {
	p := DefaultParams
	p.Row = -1
	require.ErrorIs(t, p.Validate(), ErrInvalidConfig)
	p = DefaultParams
	p.DriverStatement = hw.MaxCPUCost + 1
	require.ErrorIs(t, p.Validate(), ErrInvalidConfig)
	require.NoError(t, (&Params{}).Validate())
}
