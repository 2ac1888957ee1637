package e2e

import "github.com/vulnscan/vulnscan/pkg/apikey"

func unknownKey() string {
	k, _, _, err := apikey.Generate()
	if err != nil {
		panic(err)
	}
	return k
}
