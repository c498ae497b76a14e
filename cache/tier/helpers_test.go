package tier_test

import "github.com/enginelab/enginelab/cache/page"

// testPageSize is the page size of the tests: the smallest allowed.
const testPageSize = 4096

// pid is a short page.ID constructor.
func pid(space, no uint32) page.ID { return page.ID{Space: space, Page: no} }
