package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner/configref"
)

func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "write or check the config file",
		Subcommands: []*cli.Command{
			{
				Name:      "init",
				Usage:     "print a commented config for this machine, or write it (--write)",
				ArgsUsage: "[--write [PATH]]",
				Description: "Discovers the machine (--sysfs) and prints a config with every key, its\n" +
					"description and default, the partitions it makes here, and the machine's\n" +
					"page sizes and CPU-less nodes. With --generic it prints the config the\n" +
					"package installs: every key commented out at its default, tied to no\n" +
					"machine (nothing is read).\n\n" +
					"--write writes it to PATH instead, by default the config file the other\n" +
					"commands read (--config, /etc/numa-partition/config.toml): the missing\n" +
					"directories are made and the file replaced atomically, below --root (no\n" +
					"symbolic link is followed out of it). An existing file is the host's\n" +
					"edited config: it is kept, and init refuses, unless --force.\n\n" +
					"--from-cluster KUBECONFIG reads the cluster's kube-system/kubelet-config\n" +
					"with that kubeconfig (below --root), as kubeadm join does, and makes its\n" +
					"clusterDNS and clusterDomain live in [kubelet]: the pods of every\n" +
					"partition then resolve the cluster's names. The bootstrap kubeconfig the\n" +
					"kubelets join with may read it (kubeadm's RBAC lets bootstrap tokens).",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "hostname", Usage: "host name to write into the comments (default: this machine's)"},
					&cli.BoolFlag{Name: "generic", Usage: "print the machine-independent default config (packaging/config.toml)"},
					&cli.BoolFlag{Name: "write", Usage: "write the config to PATH, by default --config's file, instead of printing it: directories made, file replaced atomically"},
					&cli.BoolFlag{Name: "force", Usage: "with --write, replace an existing file"},
					&cli.StringFlag{Name: "from-cluster", Usage: "read clusterDNS and clusterDomain from the cluster's kube-system/kubelet-config with `KUBECONFIG`, as kubeadm join does"},
					rootFlag(),
				},
				Action: func(c *cli.Context) error {
					path, err := initWritePath(c)
					if err != nil {
						return err
					}
					content, err := initConfig(c)
					if err != nil {
						return err
					}
					if path == "" {
						_, err = c.App.Writer.Write(content)
						return err
					}
					return writeInitConfig(c, path, content)
				},
			},
			{
				Name:  "reference",
				Usage: "print every config key with its type, default and description (markdown)",
				Description: "Prints the reference of the config file as markdown, generated from the\n" +
					"code that reads it; docs/config-reference.md is this output.",
				Action: func(c *cli.Context) error {
					_, err := c.App.Writer.Write(configref.ReferenceMarkdown())
					return err
				},
			},
			{
				Name:  "check",
				Usage: "validate --config against this machine; prints nothing when it plans",
				Flags: planFlags(),
				Action: func(c *cli.Context) error {
					if _, err := loadConfig(c); err != nil {
						return err
					}
					// The warnings say what apply would do beyond the
					// config (free the hugepages it does not list).
					plan, _, err := loadPlan(c)
					if err == nil {
						logWarnings(plan.Warnings)
					}
					return err
				},
			},
		},
	}
}

// initConfig is the config init writes: this machine's (discovered below
// --root, or at --sysfs), or with --generic the package's.
func initConfig(c *cli.Context) ([]byte, error) {
	if c.Bool("generic") {
		if c.IsSet("hostname") {
			return nil, exitError{code: 2, msg: "config init: --hostname describes a machine; --generic writes for none"}
		}
		if c.IsSet("from-cluster") {
			return nil, exitError{code: 2, msg: "config init: --from-cluster reads a cluster; --generic writes the package's config, tied to none"}
		}
		return configref.GenericConfig(), nil
	}
	_, sysfs := hostRoot(c)
	topo, err := numa.NewFS(sysfs).WithContext(c.Context).Discover()
	if err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	host := c.String("hostname")
	if host == "" {
		host, _ = os.Hostname()
	}
	cluster, err := initFromCluster(c)
	if err != nil {
		return nil, err
	}
	return configref.InitConfig(topo, host, cluster), nil
}

// clusterReadTimeout bounds --from-cluster's one request.
const clusterReadTimeout = 10 * time.Second

// initFromCluster is what --from-cluster reads of the cluster; nil
// without it. Each error says what to do instead.
func initFromCluster(c *cli.Context) (*configref.FromCluster, error) {
	file := c.String("from-cluster")
	if file == "" {
		return nil, nil
	}
	fail := func(err error, what string) error {
		return fmt.Errorf("config init --from-cluster %s: %w; %s", file, err, what)
	}
	const yourself = "set kubelet.cluster_dns and kubelet.cluster_domain in the config yourself (README.md, \"Joining an existing kubeadm cluster\")"
	cfg, err := kubeapi.Load(c.String("root"), file)
	if err != nil {
		return nil, fail(err, "give the bootstrap kubeconfig the kubelets join with, or the admin's; or "+yourself)
	}
	cl := kubeapi.NewClient(cfg, kubeapi.Options{Timeout: clusterReadTimeout})
	defer cl.Close()
	got, err := cl.ClusterKubelet(c.Context)
	switch {
	case errors.Is(err, kubeapi.ErrNotFound):
		return nil, fail(err, "the cluster keeps no kube-system/kubelet-config (kubeadm makes it, another installer may not): "+yourself)
	case errors.Is(err, kubeapi.ErrForbidden), errors.Is(err, kubeapi.ErrUnauthorized):
		return nil, fail(err, "kubeadm lets bootstrap tokens read it (Role kubeadm:kubelet-config); give a kubeconfig that may; or "+yourself)
	case err != nil:
		return nil, fail(err, "check the server and the network to it; or "+yourself)
	}
	return &configref.FromCluster{Source: got.Source + " read with " + file, ClusterDNS: got.ClusterDNS, ClusterDomain: got.ClusterDomain}, nil
}

// initWritePath is where config init --write writes, a path on the host
// below --root; "" without --write (print). PATH is the one argument,
// else --config's file. Without --root a relative PATH is the working
// directory's; below another root it would be ambiguous, and is refused.
func initWritePath(c *cli.Context) (string, error) {
	args := c.Args().Slice()
	if !c.Bool("write") {
		if len(args) > 0 {
			return "", fmt.Errorf("config init: %q: a PATH is where --write writes; without --write the config is printed", args[0])
		}
		if c.Bool("force") {
			return "", fmt.Errorf("config init: --force replaces the file --write writes: allowed only with --write")
		}
		return "", nil
	}
	if len(args) > 1 {
		return "", fmt.Errorf("config init --write: one PATH, got %q", args)
	}
	path := globalString(c, "config")
	if len(args) == 1 {
		path = args[0]
	}
	if filepath.IsAbs(path) {
		return path, nil
	}
	if root := c.String("root"); filepath.Clean(root) != "/" {
		return "", fmt.Errorf("config init --write %q: a path below --root %s must be absolute (the host's: /etc/numa-partition/config.toml)", path, root)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("config init --write %q: %w", path, err)
	}
	return abs, nil
}

// writeInitConfig writes content to path below --root through
// fsutil.Root, the one atomic write (a temporary file, fsync, rename),
// making the missing directories: on a fresh host /etc/numa-partition
// does not exist, and `config init > /etc/numa-partition/config.toml`
// failed there. An existing file (or a link at its name) is the host's
// edited config, kept unless --force; with --force a link is replaced,
// never followed.
func writeInitConfig(c *cli.Context, path string, content []byte) error {
	root := fsutil.NewRoot(c.String("root"))
	if !c.Bool("force") {
		_, err := root.Lstat(path)
		if err == nil {
			return fmt.Errorf("config init --write: %s exists: it is kept (--force replaces it)", root.Path(path))
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("config init --write: %w", err)
		}
	}
	if err := root.WriteFile(path, content, 0o644); err != nil {
		return fmt.Errorf("config init --write: %w", err)
	}
	_, err := fmt.Fprintf(c.App.Writer, "wrote %s: edit it, then numa-partition config check\n", root.Path(path))
	return err
}
