// Package paper is the connector of perpgate's built-in paper exchange: a
// stateless adapter from the connector runtime to the paper venue's HTTP
// API, exactly like the adapters of real exchanges. The venue (package
// venue) holds all paper state, so connector replicas are interchangeable.
package paper
