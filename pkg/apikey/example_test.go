package apikey_test

import (
	"fmt"

	"github.com/perpgate/perpgate/pkg/apikey"
)

func Example() {
	k, err := apikey.Generate(apikey.EnvTest)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(k.Reveal()), k.Display() == k.Reveal()[:12], len(k.Hash()))
	fmt.Println(fmt.Sprint(k) == k.Display()+"****")

	env, err := apikey.Parse("sk_live_abc")
	fmt.Printf("%q %v\n", env, err)
	// Output:
	// 51 true 64
	// true
	// "" api key must start with mt_live_ or mt_test_
}
