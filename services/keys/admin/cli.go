package admin

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
)

// DefaultURL is the admin API address the CLI uses when PERPGATE_ADMIN_URL
// is unset.
const DefaultURL = "http://127.0.0.1:8081"

// Exit statuses of RunCLI.
const (
	ExitOK    = 0 // success; the response is on stdout
	ExitError = 1 // the API refused or could not be reached; the error is on stderr
	ExitUsage = 2 // the command line is wrong
)

const cliUsage = `usage:
  perpgate account create --tier free|builder|pro [--name N]
  perpgate account list
  perpgate key create --account ID --env live|test [--operations a,b] [--exchanges x,y] [--credentials id,..] [--expires-at RFC3339] [guards]
  perpgate key list --account ID
  perpgate key guards ID [guards]
  perpgate key halt ID [--cancel-orders] [--close-positions]
  perpgate key revoke ID
  perpgate key usage ID [--days N]
  perpgate credential create --account ID --exchange X --env mainnet|testnet [--label L] --secret-file F|-
  perpgate credential list --account ID
  perpgate credential delete ID
  perpgate audit --account ID [--since RFC3339] [--until RFC3339] [--limit N] [--cursor C] [--oldest]

Guards: --read-only true|false, --allowed-markets BTC-USDT-PERP,ETH,..,
--max-order-notional N, --max-daily-notional N, --max-position-notional N
(quote currency), --max-leverage N; the camelCase spellings (--maxOrderNotional)
work too. With key guards, the value none removes a limit and absent flags stay.

Each command prints one JSON object. It talks to the admin API at
PERPGATE_ADMIN_URL (default ` + DefaultURL + `) with PERPGATE_ADMIN_TOKEN.
`

// usageError is a wrong command line; RunCLI exits ExitUsage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// cli is one run of the command line.
type cli struct {
	client *Client
	token  string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	fs     *flag.FlagSet // the command's flags, for its --help
}

// RunCLI runs one admin command (args without the program name, e.g.
// "key", "list", "--account", ID) and returns the exit status: ExitOK with
// the API's JSON response on stdout; ExitError with the API's JSON error
// envelope (or a transport error) on stderr; ExitUsage with a message and
// the usage on stderr. It reads PERPGATE_ADMIN_URL and PERPGATE_ADMIN_TOKEN
// through lookup.
func RunCLI(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	baseURL := DefaultURL
	if v, ok := lookup("PERPGATE_ADMIN_URL"); ok && v != "" {
		baseURL = v
	}
	token, _ := lookup("PERPGATE_ADMIN_TOKEN")
	c := &cli{client: NewClient(baseURL, token), token: token, stdin: stdin, stdout: stdout, stderr: stderr}

	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, cliUsage)
		return ExitOK
	}
	if len(args) > 0 && args[0] == "audit" { // a command without subcommands
		args = append([]string{"audit", ""}, args[1:]...)
	}
	if len(args) == 1 || len(args) > 1 && isHelp(args[1]) {
		usage := groupUsage(args[0])
		if usage == "" {
			fmt.Fprintf(stderr, "perpgate: unknown command %q\n\n%s", truncate(args[0]), cliUsage)
			return ExitUsage
		}
		if len(args) == 1 {
			fmt.Fprintf(stderr, "perpgate: %s needs a subcommand\n\n%s", args[0], usage)
			return ExitUsage
		}
		fmt.Fprint(stdout, usage)
		return ExitOK
	}
	if len(args) > 2 && slices.ContainsFunc(args[2:], isHelp) {
		args = []string{args[0], args[1], "--help"} // help wins wherever it is, with no side effect
	}
	out, err := c.run(ctx, args)
	var ue *usageError
	var ce *contract.Error
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.printHelp(c.stdout, args[0]+" "+args[1])
		return ExitOK
	case errors.As(err, &ue) && c.fs != nil: // a known command: its own usage
		fmt.Fprintf(stderr, "perpgate: %s\n\n", ue.msg)
		c.printHelp(stderr, args[0]+" "+args[1])
		return ExitUsage
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "perpgate: %s\n\n%s", ue.msg, cliUsage)
		return ExitUsage
	case errors.As(err, &ce):
		writeJSON(stderr, errorResponse{Success: false, Error: ce})
		return ExitError
	case unreachable(err):
		fmt.Fprintf(stderr, "perpgate: cannot reach the admin API at %s (PERPGATE_ADMIN_URL): nothing answers there. "+
			"Is `perpgate serve` running? It serves the admin API on PERPGATE_ADMIN_ADDR (default 127.0.0.1:8081); "+
			"start it, or set PERPGATE_ADMIN_URL to where it listens.\n", baseURL)
		return ExitError
	case err != nil:
		fmt.Fprintf(stderr, "perpgate: %v\n", err)
		return ExitError
	}
	writeJSON(stdout, out)
	return ExitOK
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

// groupUsage returns the usage lines of one command group ("key"), or ""
// when there is no such group.
func groupUsage(group string) string {
	var b strings.Builder
	for _, line := range strings.Split(cliUsage, "\n") {
		if strings.HasPrefix(line, "  perpgate "+group+" ") {
			b.WriteString(line + "\n")
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "usage:\n" + b.String() + "\nRun `perpgate " + group + " <command> --help` for a command's flags.\n"
}

// printHelp prints one command's usage line and flags to w.
func (c *cli) printHelp(w io.Writer, cmd string) {
	cmd = strings.TrimSpace(cmd)
	fmt.Fprint(w, "usage:\n")
	for _, line := range strings.Split(cliUsage, "\n") {
		if strings.HasPrefix(line, "  perpgate "+cmd+" ") || line == "  perpgate "+cmd {
			fmt.Fprintln(w, line)
		}
	}
	if c.fs != nil {
		fmt.Fprintln(w, "\nflags:")
		shown, aliases := flag.NewFlagSet(c.fs.Name(), flag.ContinueOnError), false
		c.fs.VisitAll(func(f *flag.Flag) {
			if isGuardAlias(f.Name) {
				aliases = true
				return
			}
			shown.Var(f.Value, f.Name, f.Usage)
		})
		shown.SetOutput(w)
		shown.PrintDefaults()
		if aliases {
			fmt.Fprintln(w, "\nThe guard flags' camelCase spellings (--maxOrderNotional) work too; none removes a limit.")
		}
	}
	if cmd == "credential create" {
		writeSecretFields(w)
	}
	fmt.Fprintf(w, "\nIt talks to the admin API at PERPGATE_ADMIN_URL (default %s) with PERPGATE_ADMIN_TOKEN.\n", DefaultURL)
}

// exchangeIDs lists the exchange ids, "a, b or c".
func exchangeIDs() string {
	ids := make([]string, len(contract.Exchanges))
	for i, x := range contract.Exchanges {
		ids[i] = string(x)
	}
	return strings.Join(ids[:len(ids)-1], ", ") + " or " + ids[len(ids)-1]
}

// writeSecretFields lists each exchange's secret fields for --secret-file.
func writeSecretFields(w io.Writer) {
	fmt.Fprintln(w, "\nThe secret file holds one JSON object; its fields by exchange (? optional):")
	for _, x := range contract.Exchanges {
		fmt.Fprintf(w, "  %-12s %s\n", x, strings.Join(contract.SecretFields[x], ", "))
	}
}

// unreachable reports a transport error where nothing answered: a refused
// connection, an unknown host or a timeout.
func unreachable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &op) || errors.As(err, &dns)
}

// ready reports a missing admin token; commands call it after their flags
// parsed, so --help needs no token.
func (c *cli) ready() error {
	if c.token == "" {
		return usagef("PERPGATE_ADMIN_TOKEN is not set: export the admin token (perpgate serve writes it to .perpgate/bootstrap.json)")
	}
	return nil
}

// run dispatches one command and returns the response to print.
func (c *cli) run(ctx context.Context, args []string) (any, error) {
	if len(args) < 2 {
		return nil, usagef("expected a command such as `key create`")
	}
	cmd, rest := args[0]+" "+args[1], args[2:]
	run, ok := map[string]func(context.Context, []string) (any, error){
		"account create":    c.accountCreate,
		"account list":      c.accountList,
		"key create":        c.keyCreate,
		"key list":          c.keyList,
		"key revoke":        c.keyRevoke,
		"key guards":        c.keyGuards,
		"key halt":          c.keyHalt,
		"key usage":         c.keyUsage,
		"audit ":            c.audit,
		"credential create": c.credentialCreate,
		"credential list":   c.credentialList,
		"credential delete": c.credentialDelete,
	}[cmd]
	if !ok {
		return nil, usagef("unknown command %q", truncate(cmd))
	}
	return run(ctx, rest)
}

// idFirst lets a command take its id before its flags (key guards ID
// --flag): the flag package stops at the first argument that is not one.
func idFirst(args []string) []string {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return append(slices.Clone(args[1:]), args[0])
	}
	return args
}

// flags returns a flag set for cmd that reports errors instead of printing.
func (c *cli) flags(cmd string) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.fs = fs
	return fs
}

// parse parses args into fs and wants exactly nPos positional arguments,
// named by posNames for messages.
func parse(fs *flag.FlagSet, args []string, posNames ...string) ([]string, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usagef("%s: %v", fs.Name(), err)
	}
	pos := fs.Args()
	if len(pos) > len(posNames) {
		return nil, usagef("%s: unexpected argument %q", fs.Name(), truncate(pos[len(posNames)]))
	}
	if len(pos) < len(posNames) {
		return nil, usagef("%s: missing %s", fs.Name(), posNames[len(pos)])
	}
	return pos, nil
}

func required(fs *flag.FlagSet, names ...string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, n := range names {
		if !set[n] {
			return usagef("%s: --%s is required", fs.Name(), n)
		}
	}
	return nil
}

func (c *cli) accountCreate(ctx context.Context, args []string) (any, error) {
	fs := c.flags("account create")
	tier := fs.String("tier", "", "free, builder or pro")
	name := fs.String("name", "", "account name")
	if _, err := parse(fs, args); err != nil {
		return nil, err
	}
	if err := required(fs, "tier"); err != nil {
		return nil, err
	}
	if err := c.ready(); err != nil {
		return nil, err
	}
	return c.client.CreateAccount(ctx, contract.Tier(*tier), *name)
}

func (c *cli) accountList(ctx context.Context, args []string) (any, error) {
	if _, err := parse(c.flags("account list"), args); err != nil {
		return nil, err
	}
	if err := c.ready(); err != nil {
		return nil, err
	}
	return c.client.ListAccounts(ctx)
}

func (c *cli) keyCreate(ctx context.Context, args []string) (any, error) {
	fs := c.flags("key create")
	account := fs.String("account", "", "account id")
	env := fs.String("env", "", "live or test")
	ops := fs.String("operations", "", "comma-separated allowed operations")
	exs := fs.String("exchanges", "", "comma-separated allowed exchanges")
	creds := fs.String("credentials", "", "comma-separated allowed credential ids")
	expires := fs.String("expires-at", "", "expiry, RFC 3339")
	guardFlags(fs)
	if _, err := parse(fs, args); err != nil {
		return nil, err
	}
	if err := required(fs, "account", "env"); err != nil {
		return nil, err
	}
	patch, err := guardPatch(fs)
	if err != nil {
		return nil, err
	}
	if err := c.ready(); err != nil {
		return nil, err
	}
	req := KeyRequest{
		Env:                contract.KeyEnv(*env),
		AllowedOperations:  splitList(*ops),
		AllowedCredentials: splitList(*creds),
	}
	for _, x := range splitList(*exs) {
		req.AllowedExchanges = append(req.AllowedExchanges, contract.Exchange(x))
	}
	g, ce := contract.PatchGuards(contract.Guards{}, patch)
	if ce != nil {
		return nil, usagef("key create: %s", ce.Message)
	}
	req.Guards = g
	if *expires != "" {
		t, err := time.Parse(time.RFC3339, *expires)
		if err != nil {
			return nil, usagef("key create: --expires-at must be an RFC 3339 time such as 2030-01-01T00:00:00Z")
		}
		req.ExpiresAt = &t
	}
	return c.client.CreateKey(ctx, *account, req)
}

// keyGuards changes a key's guards: flags given replace, none removes.
func (c *cli) keyGuards(ctx context.Context, args []string) (any, error) {
	fs := c.flags("key guards")
	guardFlags(fs)
	pos, err := parse(fs, idFirst(args), "key id")
	if err != nil {
		return nil, err
	}
	patch, err := guardPatch(fs)
	if err != nil {
		return nil, err
	}
	if len(patch) == 0 {
		names := make([]string, len(contract.GuardFields))
		for i, f := range contract.GuardFields {
			names[i] = kebab(f)
		}
		return nil, usagef("key guards: give at least one of --%s", strings.Join(names, ", --"))
	}
	if err := c.ready(); err != nil {
		return nil, err
	}
	return c.client.UpdateKeyGuards(ctx, pos[0], patch)
}

// keyHalt is the kill switch: the key turns read-only at once; the flags
// also cancel the orders and close the positions it can reach.
func (c *cli) keyHalt(ctx context.Context, args []string) (any, error) {
	fs := c.flags("key halt")
	var req contract.HaltRequest
	fs.BoolVar(&req.CancelOrders, "cancel-orders", false, "cancel the open orders on every credential the key may use")
	fs.BoolVar(&req.ClosePositions, "close-positions", false, "close the positions on every credential the key may use, with market orders")
	pos, err := parse(fs, idFirst(args), "key id")
	if err != nil {
		return nil, err
	}
	if err := c.ready(); err != nil {
		return nil, err
	}
	return c.client.HaltKey(ctx, pos[0], req)
}

func (c *cli) keyUsage(ctx context.Context, args []string) (any, error) {
	fs := c.flags("key usage")
	days := fs.Int("days", 7, "how many UTC days, today included (1 to 92)")
	pos, err := parse(fs, idFirst(args), "key id")
	if err != nil {
		return nil, err
	}
	if err := c.ready(); err != nil {
		return nil, err
	}
	return c.client.KeyUsage(ctx, pos[0], *days)
}

func (c *cli) audit(ctx context.Context, args []string) (any, error) {
	fs := c.flags("audit")
	account := fs.String("account", "", "account id")
	since := fs.String("since", "", "first time, RFC 3339")
	until := fs.String("until", "", "end time (excluded), RFC 3339")
	limit := fs.String("limit", "", "entries per page, 1 to 1000 (default 100): the newest N unless --oldest")
	cursor := fs.String("cursor", "", "nextCursor of the previous page")
	oldest := fs.Bool("oldest", false, "list the oldest entries first (default: the newest first)")
	if _, err := parse(fs, args); err != nil {
		return nil, err
	}
	if err := required(fs, "account"); err != nil {
		return nil, err
	}
	if err := c.ready(); err != nil {
		return nil, err
	}
	q := url.Values{"order": {"newest"}}
	if *oldest {
		q.Set("order", "oldest")
	}
	for k, v := range map[string]string{"since": *since, "until": *until, "limit": *limit, "cursor": *cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return c.client.Audit(ctx, *account, q)
}

// guardUsage is the help of each guard flag, by JSON field.
var guardUsage = map[string]string{
	"readOnly":            "true forbids placing, cancelling, closing and leverage changes",
	"allowedMarkets":      "comma-separated markets the key may trade (BTC-USDT-PERP, or BTC for every quote)",
	"maxOrderNotional":    "largest notional of one order, in quote currency",
	"maxDailyNotional":    "largest sum of order notionals per UTC day, in quote currency",
	"maxLeverage":         "highest leverage of a market the key may trade or set",
	"maxPositionNotional": "largest position of one market plus its same-side resting orders, in quote currency",
}

// kebab spells a guard's JSON field as its flag: maxOrderNotional is
// max-order-notional (DESIGN §13).
func kebab(field string) string {
	var b strings.Builder
	for _, r := range field {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('-')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// guardField returns the JSON field a guard flag sets, in either spelling.
func guardField(flagName string) (string, bool) {
	for _, f := range contract.GuardFields {
		if flagName == f || flagName == kebab(f) {
			return f, true
		}
	}
	return "", false
}

// isGuardAlias reports whether a flag is a camelCase guard spelling that
// the help leaves out (DESIGN §12's names, still accepted).
func isGuardAlias(flagName string) bool {
	f, ok := guardField(flagName)
	return ok && f == flagName && kebab(f) != f
}

// guardFlags adds one flag per guard, kebab-case, and its camelCase
// spelling as an alias.
func guardFlags(fs *flag.FlagSet) {
	for _, f := range contract.GuardFields {
		fs.String(kebab(f), "", guardUsage[f])
		fs.String(f, "", "same as --"+kebab(f))
	}
}

// guardPatch turns the guard flags given into a PATCH body: none is null.
func guardPatch(fs *flag.FlagSet) (map[string]json.RawMessage, error) {
	patch := map[string]json.RawMessage{}
	var err error
	fs.Visit(func(f *flag.Flag) {
		field, ok := guardField(f.Name)
		if !ok || err != nil {
			return
		}
		if _, twice := patch[field]; twice {
			err = usagef("%s: give --%s once", fs.Name(), kebab(field))
			return
		}
		patch[field], err = guardValue(fs.Name(), f.Name, field, f.Value.String())
	})
	return patch, err
}

// guardValue is the JSON of one guard flag's value.
func guardValue(cmd, flagName, field, v string) (json.RawMessage, error) {
	if v == "none" {
		return json.RawMessage("null"), nil
	}
	switch field {
	case "readOnly":
		if v != "true" && v != "false" {
			return nil, usagef("%s: --%s must be true or false", cmd, flagName)
		}
		return json.RawMessage(v), nil
	case "allowedMarkets":
		return json.Marshal(splitList(v))
	case "maxLeverage":
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, usagef("%s: --%s must be a whole number or none", cmd, flagName)
		}
		return json.RawMessage(strconv.Itoa(n)), nil
	}
	return json.Marshal(v)
}

func (c *cli) keyList(ctx context.Context, args []string) (any, error) {
	fs := c.flags("key list")
	account := fs.String("account", "", "account id")
	if _, err := parse(fs, args); err != nil {
		return nil, err
	}
	if err := required(fs, "account"); err != nil {
		return nil, err
	}
	if err := c.ready(); err != nil {
		return nil, err
	}
	return c.client.ListKeys(ctx, *account)
}

func (c *cli) keyRevoke(ctx context.Context, args []string) (any, error) {
	pos, err := parse(c.flags("key revoke"), args, "key ID")
	if err != nil {
		return nil, err
	}
	if err := c.ready(); err != nil {
		return nil, err
	}
	return c.client.RevokeKey(ctx, pos[0])
}

func (c *cli) credentialCreate(ctx context.Context, args []string) (any, error) {
	fs := c.flags("credential create")
	account := fs.String("account", "", "account id")
	exchange := fs.String("exchange", "", "exchange id: "+exchangeIDs())
	env := fs.String("env", "", "mainnet or testnet")
	label := fs.String("label", "", "label")
	secretFile := fs.String("secret-file", "", "file holding the secret JSON object, - for stdin")
	if _, err := parse(fs, args); err != nil {
		return nil, err
	}
	if err := required(fs, "account", "exchange", "env", "secret-file"); err != nil {
		return nil, err
	}
	if err := c.ready(); err != nil {
		return nil, err
	}
	secret, err := c.readSecret(*secretFile)
	if err != nil {
		return nil, err
	}
	return c.client.CreateCredential(ctx, *account, CredentialRequest{
		Exchange: contract.Exchange(*exchange),
		Env:      contract.Environment(*env),
		Label:    *label,
		Secret:   secret,
	})
}

// readSecret reads the secret JSON object from a file or stdin ("-"). Its
// errors never quote the content.
func (c *cli) readSecret(name string) (json.RawMessage, error) {
	var r io.Reader = c.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, usagef("credential create: --secret-file: %v", err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, BodyLimit+1))
	if err != nil {
		return nil, usagef("credential create: --secret-file: %v", err)
	}
	if len(data) > BodyLimit {
		return nil, usagef("credential create: --secret-file: larger than %d bytes", BodyLimit)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return nil, usagef("credential create: --secret-file must hold one JSON object")
	}
	return json.RawMessage(data), nil
}

func (c *cli) credentialList(ctx context.Context, args []string) (any, error) {
	fs := c.flags("credential list")
	account := fs.String("account", "", "account id")
	if _, err := parse(fs, args); err != nil {
		return nil, err
	}
	if err := required(fs, "account"); err != nil {
		return nil, err
	}
	if err := c.ready(); err != nil {
		return nil, err
	}
	return c.client.ListCredentials(ctx, *account)
}

func (c *cli) credentialDelete(ctx context.Context, args []string) (any, error) {
	pos, err := parse(c.flags("credential delete"), args, "credential ID")
	if err != nil {
		return nil, err
	}
	if err := c.ready(); err != nil {
		return nil, err
	}
	return c.client.DeleteCredential(ctx, pos[0])
}

// splitList splits a comma-separated flag, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
