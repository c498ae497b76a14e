package client

import "github.com/enginelab/enginelab/sim/hw"

func hwNetwork() hw.Network { return hw.Networks[hw.DefaultNetwork] }
