// The README's gRPC fragment, against the bridge that the blocks before
// it started, with the certificates they made.
package main

import (
	"context"
	"fmt"
	"log"
)

func main() {
	ctx := context.Background()
	//README
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(tools), "tools")
}
