// Package venue serves the paper exchange engine (pkg/paper) as a small
// HTTP JSON service, and is its typed Go client.
//
// The paper venue runs once (a service of its own, or in-process in
// standalone) so that the stateless connector-paper replicas all reach the
// same state (DESIGN §8). Decimals travel as JSON strings, times as Unix
// seconds.
//
// Routes (errors are {"error":{"kind","message"}}; see the Kind constants):
//
//	GET    /v1/markets                                  MarketsResponse
//	GET    /v1/markets/{market}                         MarketInfo
//	GET    /v1/markets/{market}/book?depth=N            Orderbook (depth 1..500, default 20)
//	GET    /v1/markets/{market}/mark                    MarkPrice
//	PUT    /v1/markets/{market}/mark      SetMarkRequest  MarkPrice (tests and simulators)
//	GET    /v1/markets/{market}/candles?interval=M&limit=N  CandlesResponse (interval minutes, default 60; limit default 100, max 1500)
//	GET    /v1/markets/{market}/funding                 Funding
//	GET    /v1/fees                                     Fees
//	GET    /v1/stream                                   websocket: StreamRequest in, StreamFrame out
//	PUT    /v1/accounts/{account}         AccountRequest  Balance (creates with startingBalance; existing accounts unchanged)
//	GET    /v1/accounts/{account}/balance               Balance
//	GET    /v1/accounts/{account}/positions?market=     PositionsResponse
//	POST   /v1/accounts/{account}/positions/{market}/close  CloseResponse
//	GET    /v1/accounts/{account}/orders?market=        OrdersResponse (OPEN and PENDING)
//	POST   /v1/accounts/{account}/orders  OrderRequest    Order
//	DELETE /v1/accounts/{account}/orders?market=        CancelAllResponse
//	GET    /v1/accounts/{account}/orders/{id}           Order (any state)
//	GET    /v1/accounts/{account}/orders?clientOrderId= OrdersResponse (the newest order with that id, any state)
//	DELETE /v1/accounts/{account}/orders/{id}           Order (now CANCELLED)
//	PATCH  /v1/accounts/{account}/orders/{id}  AmendRequest  Order (amended in place)
//	GET    /v1/accounts/{account}/fills?market=&limit=N FillsResponse (newest first, default 100)
//	GET    /v1/accounts/{account}/leverage/{market}     LeverageResponse
//	PUT    /v1/accounts/{account}/leverage/{market} LeverageRequest  LeverageResponse
//
// Accounts are created on first use with the engine's default starting
// balance; PUT /v1/accounts/{account} creates one with another balance.
package venue
