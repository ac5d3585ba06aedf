// The tools of the cloud, container, storage, backup, database, secrets and
// system ecosystems, one data table per family: a program, its command
// words and options that destroy or change something, and the reason shown
// to the person (what is destroyed). The next CLI is one row. Programs not
// in any table stay `ask` as unknown programs. The rule that reads a
// command against the rows is in family_rule.cpp.

#include "lib/shell/rules/families.hpp"

namespace kai::shell {

namespace {

constexpr V A = V::ask;
constexpr V C = V::confirm;
constexpr V B = V::blocked;

}  // namespace

// clang-format off
const std::vector<Tool>& tools() {
  static const std::vector<Tool> k_tools = {
  // ---- cloud ----
  {"cloud", "aws", "--profile --region --output --endpoint-url --query --cli-input-json --cli-input-yaml --ca-bundle --color --cli-read-timeout --cli-connect-timeout --page-size --max-items --starting-token --exclude --include --acl --storage-class --sse --content-type --expires --metadata", "--dryrun --dry-run", {
      {"s3 rb", "--force @root", B, "deletes an S3 bucket and every object in it, without a way back"},
      {"s3 rb", "", C, "deletes an S3 bucket"},
      {"s3 rm", "--recursive @root", B, "deletes every object of an S3 bucket, without a way back"},
      {"s3 rm", "", C, "deletes objects from S3"},
      {"s3 sync", "--delete", C, "deletes files at the destination that the source does not have (aws s3 sync --delete)", Act::dest},
      {"s3 mv", "", C, "moves objects: the source is deleted", Act::dest},
      {"s3 cp|sync", "", C, "copies files to or from S3", Act::dest},
      {"s3 ls|presign", "", A, ""},
      {"s3 mb|website", "", C, "creates or changes S3 buckets"},
      {"s3api delete-*", "", C, "deletes S3 buckets, objects or their settings"},
      {"rds delete-db-instance|delete-db-cluster", "--skip-final-snapshot", B, "deletes a database without a final snapshot, without a way back"},
      {"secretsmanager delete-secret", "--force-delete-without-recovery", B, "deletes a secret without a recovery window"},
      {"secretsmanager get-secret-value|batch-get-secret-value", "", C, "prints secrets"},
      {"ssm get-parameter|get-parameters|get-parameters-by-path|get-parameter-history", "--with-decryption", C, "prints decrypted secrets"},
      {"kms schedule-key-deletion", "", C, "schedules a KMS key for deletion: what it encrypted becomes unreadable"},
      {"ec2 terminate-instances", "", C, "terminates EC2 instances: their instance storage is lost"},
      {"cloudformation delete-stack", "", C, "deletes a CloudFormation stack and the resources it made"},
      {"dynamodb delete-table", "", C, "deletes a DynamoDB table and its items"},
      {"ssm send-command|start-session|start-automation-execution", "", C, "runs commands on other machines"},
      {"* delete-*|terminate-*|remove-*|deregister-*|purge-*|batch-delete-*|destroy-*|revoke-*|detach-*|disassociate-*|disable-*|cancel-*|reset-*|leave-*|close-*|release-*|schedule-*-deletion", "", C, "deletes or disables AWS resources"},
      {"* stop-*|reboot-*|failover-*", "", C, "stops or restarts AWS resources"},
      {"* create-*|put-*|update-*|modify-*|attach-*|associate-*|run-*|start-*|import-*|restore-*|copy-*|register-*|enable-*|authorize-*|replace-*|set-*|tag-*|untag-*|change-*|upload-*|publish*|send-*|invoke*|deploy*|apply-*|rotate-*|add-*|accept-*|reject-*|allocate-*|request-*|promote-*|batch-*|execute-*|create|update|deploy|push", "", C, "changes AWS resources"},
    }, Store::url},
  {"cloud", "gcloud", "--project --account --configuration --region --zone --format --filter --impersonate-service-account --verbosity --billing-project --flags-file --limit --page-size --sort-by --location", "", {
      {"storage rm", "--recursive|-r @root", B, "deletes every object of a Cloud Storage bucket, without a way back"},
      {"storage rm", "", C, "deletes objects from Cloud Storage"},
      {"storage rsync", "--delete-unmatched-destination-objects", C, "deletes objects at the destination that the source does not have", Act::dest},
      {"storage cp|mv|rsync", "", C, "copies files to or from Cloud Storage", Act::dest},
      {"projects delete", "", C, "deletes a Google Cloud project and every resource in it"},
      {"sql instances delete", "", C, "deletes a Cloud SQL instance and its data"},
      {"container clusters delete", "", C, "deletes a GKE cluster and its workloads"},
      {"secrets versions access", "", C, "prints a secret"},
      {"* ** delete|remove|destroy|purge|reset|delete-instances|abandon-instances|detach-disk|remove-iam-policy-binding|remove-*", "", C, "deletes Google Cloud resources"},
      {"* ** stop|suspend|disable", "", C, "stops or disables Google Cloud resources"},
      {"* ** ssh|scp", "", C, "runs commands on, or copies files to, another machine"},
      {"* ** create|update|deploy|set-iam-policy|add-iam-policy-binding|import|restore|resize|patch|set|enable|start|rollback|apply|submit|execute|add-*|set-*|import-*", "", C, "changes Google Cloud resources"},
    }, Store::url},
  {"cloud", "gsutil", "-o -h -p -u", "", {
      {"rm", "-r|-R|-a @root", B, "deletes every object of a Cloud Storage bucket, without a way back"},
      {"rm", "", C, "deletes objects from Cloud Storage"},
      {"rb", "", C, "deletes Cloud Storage buckets"},
      {"rsync", "-d !-n", C, "deletes objects at the destination that the source does not have (gsutil rsync -d)", Act::dest},
      {"rsync", "-n", A, ""},
      {"mv", "", C, "moves objects: the source is deleted", Act::dest},
      {"cp|rsync", "", C, "copies files to or from Cloud Storage", Act::dest},
      {"* set|ch|lock|delete", "", C, "changes Cloud Storage buckets or objects"},
      {"setmeta|rewrite|compose|mb", "", C, "changes Cloud Storage buckets or objects"},
    }, Store::url},
  {"cloud", "az", "--subscription --output -o --query --resource-group -g --name -n --location -l --ids --only-show-errors", "", {
      {"group delete", "--yes|-y", B, "deletes a resource group and every resource in it, without asking and without a way back"},
      {"group delete", "", C, "deletes a resource group and every resource in it"},
      {"storage account delete", "", C, "deletes a storage account and all its data"},
      {"storage blob delete-batch|delete, storage container|share|fs delete", "", C, "deletes data from Azure Storage"},
      {"keyvault secret show|download", "", C, "prints a secret"},
      {"vm run-command invoke|create", "", C, "runs commands on a virtual machine"},
      {"storage blob download|download-batch|upload|upload-batch|sync, storage copy", "", C, "copies files to or from Azure Storage"},
      {"** delete|purge|remove|delete-*|destroy|revoke|clear", "", C, "deletes Azure resources"},
      {"** stop|deallocate|restart|disable|reset|reimage|redeploy|failover|swap|kill", "", C, "stops or restarts Azure resources"},
      {"** create|update|set|add|deploy|import|restore|start|enable|assign|grant|upload|attach|detach|scale|rotate|regenerate|renew|apply|invoke|run|up|push", "", C, "changes Azure resources"},
    }},
  {"cloud", "doctl hcloud linode-cli vultr-cli scw oci ibmcloud exo openstack aliyun tccli civo upctl fastly cloudflared flarectl", "--context --output -o --format --region --profile --config --compartment-id --os-cloud", "", {
      {"** delete|rm|destroy|remove|purge|terminate|delete-*", "", C, "deletes cloud resources"},
      {"** create|update|resize|rebuild|restore|attach|detach|power-off|poweroff|shutdown|stop|reboot|start|enable|disable|apply|set|add|import|scale|ssh", "", C, "changes cloud resources"},
    }},
  {"cloud", "eksctl kops", "--name --region --profile --state --cluster -f --config-file", "", {
      {"delete|destroy", "--yes", B, "deletes a Kubernetes cluster and its workloads, without asking"},
      {"delete|destroy|drain", "", C, "deletes a Kubernetes cluster or part of it"},
      {"create|update|upgrade|rolling-update|scale|set|edit|replace|apply", "", C, "changes a Kubernetes cluster"},
    }},
  // ---- platforms ----
  {"platform", "gh", "-R --repo --hostname -q --jq -t --template", "", {
      {"auth token", "", B, "prints a credential (gh auth token)"},
      {"auth status", "--show-token|-t", C, "prints a credential"},
      {"repo delete", "", C, "deletes a GitHub repository with its issues, pull requests and wiki"},
      {"repo archive", "", C, "archives a GitHub repository"},
      {"repo edit", "--visibility", C, "changes who can see a repository"},
      {"release delete|delete-asset", "", C, "deletes a release"},
      {"secret|variable delete|remove", "", C, "deletes secrets or variables"},
      {"* delete|remove|delete-asset|item-delete|field-delete", "", C, "deletes GitHub data"},
      {"api", "-X:DELETE|--method:DELETE", C, "sends a DELETE request to the GitHub API"},
      {"api", "-X:POST|-X:PUT|-X:PATCH|--method:POST|--method:PUT|--method:PATCH|-f|-F|--field|--raw-field|--input", C, "changes data through the GitHub API"},
      {"pr merge|close|reopen|ready|create|comment|review|edit|checkout, issue close|reopen|transfer|create|comment|edit|lock|pin, repo rename|create|fork|sync|set-default|clone, release create|edit|upload|download, workflow run|disable|enable, run rerun|cancel|download, secret|variable set, label create|edit|clone, gist create|edit, extension install|remove|upgrade, codespace create|ssh, ssh-key|gpg-key add, auth login|logout|refresh|setup-git, cache delete, project create|edit|copy, ruleset create, attestation *", "", C, "changes GitHub data"},
    }},
  {"platform", "glab", "-R --repo", "", {
      {"repo delete", "", C, "deletes a GitLab project with its issues and merge requests"},
      {"* delete|remove", "", C, "deletes GitLab data"},
      {"api", "-X:DELETE|--method:DELETE", C, "sends a DELETE request to the GitLab API"},
      {"api", "-X:POST|-X:PUT|-X:PATCH|--method:POST|--method:PUT|--method:PATCH|-f|-F|--field|--raw-field", C, "changes data through the GitLab API"},
      {"mr merge|close|create|approve|update, issue close|create|update, release create, repo archive|transfer|clone, ci run|retry|cancel, variable set|update, auth login", "", C, "changes GitLab data"},
    }},
  {"platform", "heroku", "-a --app -r --remote", "", {
      {"pg:reset", "--confirm", B, "erases every table of a Heroku Postgres database, without asking"},
      {"apps:destroy|destroy|apps:delete|addons:destroy|addons:remove|pg:reset|pg:kill|pg:killall|redis:reset|spaces:destroy|pipelines:destroy|pg:backups:delete|domains:remove|domains:clear|certs:remove|access:remove|config:unset|config:remove", "", C, "deletes Heroku apps, add-ons, databases or settings"},
      {"run|run:detached|ps:exec|console", "", C, "runs commands on Heroku"},
      {"config|config:get", "", C, "prints configuration, secrets included"},
      {"ps:kill|ps:stop|ps:restart|restart|maintenance:on|releases:rollback|rollback|ps:scale|scale|ps:resize", "", C, "stops, restarts or scales an app"},
      {"create|apps:create|*:create|*:set|*:add|*:update|*:attach|*:detach|*:enable|*:disable|*:promote|*:upgrade|*:restore|*:copy|*:pull|*:push|git:remote|deploy", "", C, "changes Heroku apps"},
    }},
  {"platform", "fly flyctl", "-a --app -c --config -o --org -r --region", "", {
      {"** destroy|delete|remove|rm|unset|kill", "", C, "deletes Fly.io apps, machines, volumes or secrets"},
      {"** ssh|console|sftp|proxy", "", C, "runs commands on another machine"},
      {"** deploy|launch|create|set|import|scale|update|restart|stop|start|attach|detach|extend|fork|clone|run|restore|suspend|resume|failover", "", C, "changes Fly.io apps"},
    }},
  {"platform", "vercel vc", "--scope --token -t -A --local-config -Q --global-config --cwd", "", {
      {"** rm|remove", "", C, "deletes Vercel projects, deployments, domains or variables"},
      {"ls|list|inspect|logs|whoami|help|login|switch|dev|pull|build|git, env|domains|dns|certs|projects|teams|alias ls|pull", "", A, ""},
      {"", "", C, "deploys to Vercel or changes its settings"},
    }},
  {"platform", "netlify ntl", "--auth --site -s --filter --context", "", {
      {"*:delete|*:unset|*:remove|sites:delete|unlink", "", C, "deletes Netlify sites or settings"},
      {"deploy|build|*:create|*:set|*:import|*:invoke|link|init|api", "", C, "deploys to Netlify or changes its settings"},
    }},
  {"platform", "firebase", "--project -P --token --config -c", "", {
      {"firestore:delete", "--all-collections", B, "deletes every collection of a Firestore database, without a way back"},
      {"database:remove|database:delete|firestore:delete|projects:delete|hosting:disable|functions:delete|auth:delete|*:delete|*:remove|hosting:channel:delete|remoteconfig:rollback", "", C, "deletes Firebase data or services"},
      {"deploy|database:set|database:update|database:push|auth:import|*:set|*:create|*:deploy|*:import|firestore:indexes|functions:config:set|emulators:exec", "", C, "deploys to Firebase or changes its data"},
    }},
  {"platform", "wrangler", "--config -c --env -e --account-id", "", {
      {"d1 execute", "", C, "runs SQL on a D1 database", Act::sql},
      {"** delete|rm|remove|purge", "", C, "deletes Cloudflare Workers, KV data, R2 objects, queues or databases"},
      {"deploy|publish, versions deploy, secret put, ** put|create|upload|rollback, ** migrations apply, ** bulk put", "", C, "deploys to Cloudflare or changes its data"},
    }, Store::none, Dialect::sql, "--command", "--file"},
  {"platform", "supabase", "--project-ref --workdir --profile -o --output", "", {
      {"db reset", "--linked", B, "erases the linked (remote) database, without a way back"},
      {"db reset", "", C, "erases the local database and its data"},
      {"stop", "--no-backup", C, "stops the local stack and deletes its data"},
      {"** delete|unset|remove|rm", "", C, "deletes Supabase projects, functions or secrets"},
      {"link, db push|dump, migration repair|up, functions deploy, secrets set, ** deploy|set|create", "", C, "changes a Supabase project"},
    }},
  {"platform", "railway", "-s --service -e --environment", "", {
      {"** down|delete", "", C, "deletes Railway deployments or services"},
      {"up|deploy|redeploy|link|add, variables set, ** set", "", C, "deploys to Railway or changes its settings"},
    }},
  {"platform", "stripe", "--api-key --project-name --stripe-account", "", {
      {"** delete", "", C, "deletes Stripe objects"},
      {"** create|update|cancel|refund|capture|confirm|pay|void|finalize|trigger|post", "", C, "changes Stripe data"},
    }},
  // ---- containers ----
  {"container", "docker podman nerdctl finch", "-H --host --context -c --config --log-level -l --tlscacert --tlscert --tlskey --connection --url --identity --namespace -n", "", {
      {"system prune", "--volumes -f|--force", B, "deletes every unused volume and the data in it, without asking"},
      {"volume prune", "-a|--all -f|--force", B, "deletes every unused volume and the data in it, without asking"},
      {"system reset", "-f|--force", B, "deletes every container, image, volume and network, without asking"},
      {"system prune", "", C, "deletes stopped containers, unused networks, dangling images and the build cache"},
      {"system reset", "", C, "deletes every container, image, volume and network"},
      {"volume rm|remove|prune", "", C, "deletes volumes and the data in them"},
      {"rm, container|pod rm|remove|prune", "", C, "deletes containers and what they hold that is not in a volume"},
      {"rmi, image rm|remove|prune|untag", "", C, "deletes images"},
      {"network rm|remove|prune, builder|buildx prune, buildx rm, context|secret|config|plugin|service|stack|node|manifest|machine rm, swarm leave, trust revoke, machine reset, system migrate, compose rm", "", C, "deletes Docker objects"},
      {"compose down", "-v|--volumes", C, "stops the project and deletes its containers, networks and volumes with their data"},
      {"compose down", "", C, "stops the project and deletes its containers and networks"},
      {"kill|stop|pause|restart|update, container|compose|pod kill|stop|restart|pause, machine stop", "", C, "stops or restarts containers"},
      {"exec|attach|debug, container|compose exec", "", C, "runs commands in a container"},
      {"cp, container|compose cp", "", C, "copies files to or from a container", Act::dest},
      {"run|create|start, container run|create|start, compose up|run|create|start, service create|update, stack deploy, pod create|start, machine start, play kube, kube play", "", C, "starts containers"},
      {"build|push|pull|tag|commit|load|import|save|login|logout, buildx build|bake, image build|push|pull|tag|load|import, container commit, network|volume|secret|config|context create, swarm init|join, plugin install, context use, compose build|push|pull, manifest push, machine init", "", C, "changes images, registries or container settings"},
    }},
  {"container", "docker-compose podman-compose", "-f --file -p --project-name --project-directory --env-file --profile", "", {
      {"down", "-v|--volumes", C, "stops the project and deletes its containers, networks and volumes with their data"},
      {"down|rm", "", C, "stops the project and deletes its containers and networks"},
      {"stop|kill|restart|pause", "", C, "stops or restarts containers"},
      {"exec|run", "", C, "runs commands in a container"},
      {"up|create|start|build|push|pull|cp", "", C, "starts containers or changes images"},
    }},
  {"container", "crictl ctr lxc incus virsh vagrant multipass kind minikube k3d colima limactl orb orbctl", "--namespace -n --runtime-endpoint -r --address --name --profile -p --connect -c", "", {
      {"** rm|rmi|rmp|delete|del|remove|destroy|undefine|purge|prune|vol-delete|pool-delete|snapshot-delete|reset", "", C, "deletes containers, machines, images or clusters"},
      {"** stop|stopp|kill|restart|reboot|shutdown|suspend|halt", "", C, "stops or restarts containers or machines"},
      {"** exec|shell|ssh|console|attach", "", C, "runs commands in a container or machine"},
      {"** create|run|start|launch|up|init|import|pull|push|load|snapshot|restore|define|provision|reload|mount", "", C, "starts or changes containers or machines"},
    }},
  // ---- kubernetes ----
  {"kubernetes", "kubectl oc kubecolor", "-n --namespace --context --cluster --user --kubeconfig -s --server --token -l --selector -o --output -f --filename -c --container --field-selector --as --as-group -k --kustomize --timeout --grace-period --request-timeout -p --patch --type", "--dry-run=client --dry-run=server --dry-run", {
      {"delete", "--all --all-namespaces|-A", B, "deletes every resource of a kind in every namespace, without a way back"},
      {"delete ns|namespace|namespaces|project|projects|ns/*|namespace/*|namespaces/*", "", B, "deletes namespaces and everything in them, without a way back"},
      {"delete pv|pvc|persistentvolume|persistentvolumes|persistentvolumeclaim|persistentvolumeclaims|crd|crds|customresourcedefinition|customresourcedefinitions", "", C, "deletes persistent volumes or resource definitions: the data in them is lost"},
      {"delete", "", C, "deletes Kubernetes resources"},
      {"drain", "", C, "evicts every pod from a node"},
      {"cordon|uncordon|taint", "", C, "changes where pods may run"},
      {"scale|autoscale, rollout undo|restart|pause|resume", "", C, "changes or restarts workloads"},
      {"get secret|secrets", "-o|--output", C, "prints secrets"},
      {"config view", "--raw", C, "prints cluster credentials"},
      {"exec|attach|run|debug|port-forward|proxy", "", C, "runs commands in, or connects to, the cluster"},
      {"cp", "", C, "copies files to or from a container", Act::dest},
      {"apply|create|replace|patch|edit|set|label|annotate|expose|certificate|new-project|new-app|adm, config set*|use-context|delete-*", "", C, "changes Kubernetes resources"},
    }},
  {"kubernetes", "helm", "-n --namespace --kube-context --kubeconfig --repository-config --registry-config --repository-cache -o --output --version --values -f --set --set-string --timeout", "--dry-run --dry-run=client --dry-run=server", {
      {"uninstall|delete|del|un", "", C, "uninstalls a release and deletes its Kubernetes resources"},
      {"rollback", "", C, "rolls a release back to an earlier revision"},
      {"install|upgrade", "", C, "installs or upgrades a release in the cluster"},
      {"push, repo add|remove|rm|update, plugin install|uninstall|update, registry login", "", C, "changes Helm repositories or plugins"},
    }},
  {"kubernetes", "argocd flux istioctl linkerd skaffold tilt kubeadm", "-n --namespace --context --kubeconfig --server --grpc-web -f --filename", "--dry-run", {
      {"uninstall|reset, x uninstall", "--purge|--force|-f|--yes|-y", B, "removes it from the cluster with everything it manages, without asking"},
      {"** delete|uninstall|rm|remove|down|reset|terminate", "", C, "deletes applications or resources from the cluster"},
      {"** sync|create|apply|install|upgrade|deploy|run|dev|up|rollback|suspend|resume|reconcile|set|patch|bootstrap|init|join|edit", "", C, "changes the cluster"},
    }},
  // ---- infrastructure as code ----
  {"infrastructure", "terraform tofu terragrunt", "-var -var-file -target -state -state-out -backup -lock-timeout -parallelism -replace", "", {
      {"destroy|destroy-all, run-all|run destroy", "-auto-approve|--auto-approve|--terragrunt-non-interactive|--non-interactive", B, "destroys every resource of the configuration, without asking"},
      {"apply|apply-all, run-all apply", "-destroy|--destroy -auto-approve|--auto-approve|--terragrunt-non-interactive|--non-interactive", B, "destroys every resource of the configuration, without asking"},
      {"destroy|destroy-all, run-all|run destroy", "", C, "destroys every resource of the configuration"},
      {"apply|apply-all, run-all apply", "-destroy|--destroy", C, "destroys every resource of the configuration"},
      {"apply|apply-all, run-all apply", "-auto-approve|--auto-approve", C, "changes infrastructure without asking"},
      {"apply|apply-all, run-all|run apply", "", C, "changes infrastructure"},
      {"state rm|mv|push|replace-provider", "", C, "changes the state: resources are forgotten or moved"},
      {"import|taint|untaint|force-unlock|refresh|login|logout, workspace delete|new|select", "", C, "changes the state or the workspace"},
    }},
  {"infrastructure", "pulumi", "-s --stack -C --cwd --config-file", "--preview-only", {
      {"destroy|down", "--yes|-y|--skip-preview|-f", B, "destroys every resource of the stack, without asking"},
      {"destroy|down", "", C, "destroys every resource of the stack"},
      {"stack rm", "--force|-f", B, "deletes a stack that still has resources, and its history"},
      {"cancel|refresh|import, stack rm|import, state delete|unprotect|move|rename", "", C, "changes the state: resources are forgotten or moved"},
      {"up|update|login|logout, config set|rm, stack init|select", "", C, "changes infrastructure or the stack"},
    }},
  {"infrastructure", "cdk cdktf serverless sls sam copilot", "--profile --region --app -a --context -c --stage -s --output", "", {
      {"destroy|delete|remove", "--force|-f|--auto-approve|--no-prompts|--yes", B, "destroys every resource of the stack, without asking"},
      {"** destroy|delete|remove", "", C, "destroys every resource of the stack"},
      {"** deploy|bootstrap|init|sync|rollback", "", C, "changes infrastructure"},
    }},
  {"infrastructure", "ansible ansible-playbook ansible-pull", "-i --inventory -l --limit -u --user -e --extra-vars -f --forks -M --module-path --vault-password-file -t --tags --skip-tags -b --become-user", "--check -C --list-hosts --list-tasks --syntax-check", {
      {"", "", C, "runs tasks on other machines"},
    }},
  // ---- storage ----
  {"storage", "rclone", "--config --log-file --bwlimit --transfers --checkers --include --exclude --filter --filter-from --include-from --exclude-from --files-from --max-age --min-age --max-size --min-size --backup-dir --suffix --max-depth --log-level --order-by --password-command", "--dry-run -n", {
      {"purge", "@root", B, "deletes everything on a remote, without a way back"},
      {"purge", "", C, "deletes a folder on a remote and everything in it"},
      {"delete|deletefile|rmdir|rmdirs|cleanup|dedupe, backend cleanup", "", C, "deletes files on a remote"},
      {"sync|bisync", "", C, "deletes files at the destination that the source does not have", Act::dest},
      {"move|moveto", "", C, "moves files: the source is deleted", Act::dest},
      {"copy|copyto|copyurl|rcat|mkdir|touch|settier|link|mount|serve", "", C, "writes files", Act::dest},
      {"config delete|create|update|password|reconnect|disconnect", "", C, "changes remotes"},
      {"config show|dump|redacted", "", C, "prints remotes with their credentials"},
    }, Store::rclone},
  {"storage", "mc mcli", "--config-dir -C", "--dry-run", {
      {"rb", "--force @root", B, "deletes a bucket and every object in it, without a way back"},
      {"rb", "", C, "deletes buckets"},
      {"rm", "--recursive|-r --force @root", B, "deletes every object of a bucket, without a way back"},
      {"rm", "", C, "deletes objects"},
      {"mirror", "--remove|--overwrite", C, "deletes or overwrites objects at the destination", Act::dest},
      {"mv", "", C, "moves objects: the source is deleted", Act::dest},
      {"cp|mirror|mb|put|get|cat|pipe, tag|retention|legalhold|anonymous set, ilm|version|event|encrypt|replicate *", "", C, "writes objects or changes buckets", Act::dest},
      {"admin *", "", C, "changes the MinIO server"},
    }, Store::mc},
  {"storage", "s3cmd s5cmd b2 azcopy", "-c --config --access_key --secret_key --endpoint-url --profile", "--dry-run -n", {
      {"rb|rm", "--recursive|-r --force|-f @root", B, "deletes every object of a bucket, without a way back"},
      {"del|rm|rb|remove|delete-bucket|delete-file-version|hide-file, bucket|file delete", "", C, "deletes objects or buckets"},
      {"sync", "--delete-removed|--delete|--delete-destination=true", C, "deletes objects at the destination that the source does not have", Act::dest},
      {"mv", "", C, "moves objects: the source is deleted", Act::dest},
      {"put|get|sync|cp|copy|mb|setacl|setpolicy|delpolicy|expire|setlifecycle|dellifecycle|upload-file|download-file", "", C, "writes objects or changes buckets", Act::dest},
    }, Store::url},
  {"storage", "hdfs hadoop", "-D -conf -fs", "", {
      {"dfs|fs -rm|-rmr|-rmdir|-expunge|-deleteSnapshot|-truncate", "-skipTrash", C, "deletes files in HDFS, bypassing the trash"},
      {"dfs|fs -rm|-rmr|-rmdir|-expunge|-deleteSnapshot|-truncate", "", C, "deletes files in HDFS"},
      {"dfs|fs -put|-copyFromLocal|-moveFromLocal|-mv|-cp|-mkdir|-chmod|-chown|-setrep|-appendToFile|-get|-copyToLocal", "", C, "writes files in HDFS"},
    }, Store::none, Dialect::none, {}, {}, 0, true},
  // ---- backup ----
  {"backup", "restic", "-r --repo --repository-file --password-file --password-command --cacert --cache-dir --key-hint --limit-upload --limit-download -o --option --tag --host --path --keep-last --keep-daily --keep-weekly --keep-monthly --keep-yearly --keep-within --keep-tag -t --target --exclude --iexclude --files-from", "--dry-run -n", {
      {"forget", "--prune", C, "forgets snapshots and deletes their data from the repository, without a way back"},
      {"forget|prune", "", C, "deletes snapshots or their data from the repository"},
      {"unlock|cache|migrate|rewrite|tag, key remove|rm|passwd, repair *", "", C, "changes the repository"},
      {"restore", "", C, "restores files, over what is there"},
      {"init|backup|copy|mount|self-update", "", C, "writes to the repository"},
    }},
  {"backup", "borg borg2", "--rsh --remote-path --lock-wait -e --encryption --keep-last --keep-within --keep-daily --keep-weekly --keep-monthly --keep-yearly -a --glob-archives --match-archives --exclude --exclude-from --pattern --patterns-from", "--dry-run -n", {
      {"delete", "@root", B, "deletes a whole backup repository with every archive in it, without a way back"},
      {"rdelete|repo-delete", "", B, "deletes a whole backup repository with every archive in it, without a way back"},
      {"delete", "", C, "deletes backup archives"},
      {"prune", "", C, "deletes the backup archives the rules do not keep"},
      {"compact|recreate|break-lock|upgrade|rename|transfer, key change-passphrase|import", "", C, "changes the repository"},
      {"create|extract|import-tar|mount|init|rcreate|repo-create", "", C, "writes to the repository, or extracts files over what is there"},
    }, Store::borg},
  {"backup", "duplicity duplicacy kopia rdiff-backup rsnapshot borgmatic tarsnap", "--name --archive-dir --gpg-options --encrypt-key --sign-key --config-file --repository --password --storage -f", "--dry-run -n", {
      {"--nuke", "", B, "deletes every archive, without a way back"},
      {"remove-older-than|remove-all-but-n-full|remove-all-inc-of-but-n-full|cleanup", "--force", C, "deletes old backups"},
      {"remove-older-than|remove-all-but-n-full|remove-all-inc-of-but-n-full|cleanup", "", A, ""},
      {"prune|--remove-older-than|-d|purge, snapshot delete|rm, ** delete, maintenance run", "", C, "deletes backups"},
      {"** restore, -x", "", C, "restores files, over what is there"},
      {"init|backup|compact|-c, ** create, repository create, policy set, check --repair", "", C, "writes to the backup repository"},
    }, Store::none, Dialect::none, {}, {}, 0, true},
  {"backup", "velero", "-n --namespace --kubecontext --kubeconfig --selector -l --include-namespaces --exclude-namespaces --from-backup --from-schedule", "", {
      {"backup delete, delete backup|backups", "--all --confirm", B, "deletes every backup, without asking"},
      {"backup|schedule|restore|backup-location|snapshot-location|repo delete, delete backup|backups|schedule|schedules|restore", "", C, "deletes backups or their schedules"},
      {"uninstall", "", C, "removes Velero and its resources from the cluster"},
      {"restore create, create restore", "", C, "restores resources into the cluster, over what is there"},
      {"install, backup|schedule|backup-location|snapshot-location create, create backup|schedule", "", C, "changes backups"},
    }},
  // ---- databases ----
  {"database", "psql", "-h --host -p --port -U --username -d --dbname -v --set --variable -P --pset -o --output -L --log-file -T --table-attr -F --field-separator -R --record-separator", "", {}, Store::none, Dialect::sql, "-c --command", "-f --file"},
  {"database", "mysql mariadb", "-h --host -P --port -u --user -D --database -S --socket --defaults-file --defaults-extra-file --login-path --default-character-set --protocol --ssl-ca --ssl-cert --ssl-key --init-command --pager", "", {}, Store::none, Dialect::sql, "-e --execute", ""},
  {"database", "sqlite3 sqlite", "-separator -nullvalue -newline -cmd", "", {}, Store::none, Dialect::sql, "-cmd", "", 2},
  {"database", "duckdb", "-separator -nullvalue", "", {}, Store::none, Dialect::sql, "-c -s -cmd", "-f", 2},
  {"database", "clickhouse-client clickhouse", "-h --host --port -u --user --password -d --database --format -f --config-file -C", "", {}, Store::none, Dialect::sql, "-q --query -n", "--queries-file"},
  {"database", "cockroach", "--host --url --user -u --database -d --certs-dir --format", "", {}, Store::none, Dialect::sql, "-e --execute", "-f --file"},
  {"database", "sqlcmd", "-S -U -P -d -H -o -s -w -h -t -l", "", {}, Store::none, Dialect::sql, "-Q -q --query", "-i --input-file"},
  {"database", "cqlsh", "-u --username -p --password -k --keyspace --cqlshrc --cqlversion --connect-timeout --request-timeout", "", {}, Store::none, Dialect::sql, "-e --execute", "-f --file"},
  {"database", "cypher-shell", "-a --address -u --username -p --password -d --database --format", "", {}, Store::none, Dialect::sql, "", "-f --file", 1},
  {"database", "influx", "-host -port -username -password -database -precision -format --host --org -o --token -t --bucket -b --org-id --config-name", "", {
      {"delete, bucket|org|user|auth|task|secret|remote delete, v1 dbrp delete, stacks remove", "", C, "deletes InfluxDB data, buckets or settings"},
      {"write|restore|setup|apply, bucket create|update, task|user|auth create, secret update", "", C, "changes InfluxDB data"},
    }, Store::none, Dialect::sql, "-execute --execute", "-import"},
  {"database", "mongosh mongo", "--host --port -u --username -p --password --authenticationDatabase --tlsCAFile --tlsCertificateKeyFile", "", {}, Store::none, Dialect::mongo, "--eval", "-f --file"},
  {"database", "redis-cli valkey-cli keydb-cli", "-h -p -s -a --user --pass -u -n -r -i -d -D --pattern --count --quoted-pattern --memkeys-samples --rdb --functions-rdb --cluster-replicas --eval", "", {}, Store::none, Dialect::redis, "", ""},
  {"database", "dropdb mysqladmin pg_dropcluster pg_restore mongorestore etcdctl consul dropuser createdb kafka-topics kafka-topics.sh kafka-consumer-groups kafka-consumer-groups.sh kafka-delete-records kafka-delete-records.sh rabbitmqctl rabbitmqadmin nats", "-h --host -p --port -U --username -d --dbname -u --user --endpoints --cacert --cert --key --bootstrap-server --zookeeper --topic --group --offset-json-file -n --node -V --vhost -s --server --creds --context", "", {
      {"", "@dropdb", B, "drops a whole database, without a way back"},
      {"drop", "@mysqladmin", B, "drops a whole database, without a way back"},
      {"shutdown|flush-*|kill|reload|refresh|password", "@mysqladmin", C, "stops, flushes or changes the database server"},
      {"", "@pg_dropcluster", B, "drops a whole database cluster, without a way back"},
      {"", "@pg_restore --clean|-c", C, "drops database objects before restoring them"},
      {"", "@mongorestore --drop", C, "drops collections before restoring them"},
      {"del|delete", "@etcdctl --prefix|--from-key @empty", B, "deletes every key of the store, without a way back"},
      {"del|delete|defrag|compaction|compact, lease revoke, snapshot restore, member remove, user|role delete", "@etcdctl", C, "deletes keys or changes the cluster"},
      {"put|txn, lease grant, user|role add, auth enable|disable", "@etcdctl", C, "changes the store"},
      {"kv delete", "@consul -recurse", C, "deletes every key under a prefix"},
      {"leave|force-leave, kv delete, acl * delete, services deregister, snapshot restore, operator raft remove-peer", "@consul", C, "deletes keys or changes the cluster"},
      {"kv put|import, acl * create|update, services register, config write|delete, intention create|delete", "@consul", C, "changes the store or the cluster"},
      {"", "@dropuser", C, "drops a database role"},
      {"", "@createdb", C, "creates a database"},
      {"", "@kafka-topics|@kafka-topics.sh --delete", C, "deletes Kafka topics and their messages"},
      {"", "@kafka-topics|@kafka-topics.sh --create|--alter", C, "changes Kafka topics"},
      {"", "@kafka-consumer-groups|@kafka-consumer-groups.sh --delete|--delete-offsets", C, "deletes consumer groups or their offsets"},
      {"", "@kafka-consumer-groups|@kafka-consumer-groups.sh --reset-offsets --execute", C, "moves consumer groups' offsets"},
      {"", "@kafka-delete-records|@kafka-delete-records.sh", C, "deletes Kafka records"},
      {"reset|force_reset", "@rabbitmqctl", C, "wipes the node: its queues, users and messages"},
      {"delete_*|purge_queue|clear_*|stop|stop_app|forget_cluster_node|close_*", "@rabbitmqctl", C, "deletes RabbitMQ data or stops the node"},
      {"add_*|set_*|change_*|import_definitions|join_cluster|start_app", "@rabbitmqctl", C, "changes RabbitMQ"},
      {"delete|purge|close", "@rabbitmqadmin", C, "deletes RabbitMQ queues, exchanges or messages"},
      {"declare|publish|import", "@rabbitmqadmin", C, "changes RabbitMQ"},
      {"** rm|del|delete|purge", "@nats", C, "deletes NATS streams, consumers, keys or objects"},
      {"** add|create|put|pub|publish|edit|update|restore", "@nats", C, "changes NATS data"},
    }},
  // ---- database migrations and frameworks: what drops or wipes data ----
  {"database", "prisma", "--schema --name", "", {
      {"migrate reset, db push", "--force|-f|--force-reset --accept-data-loss|--force-reset|--force", B, "drops the database's data and rebuilds it, without asking"},
      {"migrate reset", "", C, "drops the database and applies every migration again: its data is lost"},
      {"db push", "--force-reset|--accept-data-loss", C, "resets the database or accepts data loss to match the schema"},
      {"migrate dev|deploy|resolve, db push|execute|seed", "", C, "changes the database"},
    }},
  {"database", "manage.py django-admin rails rake artisan", "--settings --database -e --environment --env", "", {
      {"flush|reset_db|db:drop|db:reset|db:purge|db:schema:load|db:structure:load|db:migrate:reset|db:truncate_all|migrate:fresh|migrate:reset|migrate:refresh|db:wipe", "--noinput|--no-input|--force", B, "deletes every row of every table, without asking"},
      {"flush|reset_db|sqlflush|db:drop|db:reset|db:purge|db:schema:load|db:structure:load|db:migrate:reset|db:truncate_all|migrate:fresh|migrate:reset|migrate:refresh|db:wipe", "", C, "drops the database or deletes every row of every table"},
      {"migrate|migrate:rollback|db:migrate|db:rollback|db:seed|db:setup|loaddata|createsuperuser|db:seed:replant", "", C, "changes the database"},
    }},
  {"database", "knex sequelize typeorm alembic flyway liquibase dbmate goose diesel sqlx atlas migrate", "--env --url -u --config -c --dir -d --database-url --schema -x", "", {
      {"clean|drop|drop-all|reset|schema:drop|db:drop, database drop|reset, schema clean, downgrade base, down-to 0", "", C, "drops the database or every table in it"},
      {"migrate:rollback|migrate:down", "--all", C, "rolls every migration back: the tables they made are dropped"},
      {"** migrate|upgrade|downgrade|up|down|rollback|redo|apply|update|run|revert|db:migrate|migration:run|migration:revert|migrate:latest|migrate:rollback|seed:run", "", C, "changes the database"},
    }},
  // ---- secrets ----
  {"secrets", "vault bao", "-address -namespace -ns -format -field -mount -output-curl-string -ca-cert", "", {
      {"kv destroy, kv metadata delete", "", C, "destroys secret versions, without a way back"},
      {"secrets|auth disable", "", C, "disables a secrets engine or auth method and deletes what it holds"},
      {"delete, kv delete|rollback, policy|namespace delete, token|lease revoke, operator seal|step-down, operator raft remove-peer, audit disable", "", C, "deletes or revokes secrets, policies or tokens"},
      {"read, kv get|list, kv metadata get, token lookup, print token, operator raft snapshot save", "", C, "prints secrets"},
      {"write|login|unwrap, kv put|patch|undelete, secrets|auth|audit enable, policy write, token|namespace create, operator *", "", C, "changes secrets, policies or tokens"},
    }},
  {"secrets", "op doppler bw pass gopass sops security aws-vault chamber infisical", "--account --vault --project -p --config -c --session --format", "", {
      {"** run|exec", "", C, "runs a command with secrets in its environment", Act::exec},
      {"** delete|remove|rm|purge|delete-*|destroy", "", C, "deletes secrets"},
      {"read|inject|show|get|find-generic-password|find-internet-password|dump-keychain|export|-d|--decrypt|decrypt|secrets|unlock|view|cat, ** get|download, item|document get", "", C, "prints or hands out secrets"},
      {"** create|set|edit|insert|generate|upload|add-*|import|write|encrypt|-e|--encrypt|rotate|mv|cp|init", "", C, "changes secrets"},
    }},
  // ---- system ----
  {"system", "cryptsetup zpool zfs btrfs mdadm badblocks hdparm nvme flashrom sg_format", "-o -O -t -f", "--dry-run -n", {
      {"luksFormat|erase|luksErase|format|sanitize|labelclear|--zero-superblock|--security-erase|--security-erase-enhanced|-w|--write", "", B, "wipes a disk or its encryption keys, without a way back"},
      {"destroy|remove|--remove|--fail|detach|offline|split|rollback|luksKillSlot|luksRemoveKey|close|--stop, subvolume|snapshot|filesystem delete, device delete|remove", "", C, "deletes or detaches storage"},
      {"create|add|attach|replace|set|snapshot|send|receive|recv|balance|scrub|resize|open|luksOpen|luksAddKey|--create|--add|--grow|-W, subvolume create", "", C, "changes storage"},
    }},
  {"system", "iptables ip6tables nft ufw firewall-cmd userdel groupdel deluser delgroup passwd chpasswd usermod useradd adduser groupadd visudo sysctl modprobe rmmod insmod swapoff swapon mount umount losetup dmsetup journalctl timedatectl hostnamectl nmcli ip ifconfig route", "-t --table -j -m --zone -o -w -s -c -G -g -u -n -p -T --add-service --remove-service", "--dry-run", {
      {"", "@userdel|@groupdel|@deluser|@delgroup|@rmmod", C, "deletes users, groups or kernel modules"},
      {"", "@useradd|@adduser|@groupadd|@usermod|@passwd|@chpasswd|@visudo|@insmod", C, "changes users, passwords or the kernel"},
      {"", "@modprobe -r|--remove", C, "removes kernel modules"},
      {"", "@sysctl -w|--write|-p|--load|--system", C, "changes kernel settings"},
      {"", "@swapoff|@umount", C, "unmounts file systems or turns swap off"},
      {"*", "@mount", C, "mounts file systems"},
      {"", "@losetup -d|-D|--detach|--detach-all", C, "detaches loop devices"},
      {"remove|remove_all|clear|wipe_table", "@dmsetup", C, "removes device-mapper devices"},
      {"-F|--flush|-X|--delete-chain|-Z|--zero|-D|--delete|-P|--policy|-A|--append|-I|--insert|-R|--replace|-N|--new-chain", "@iptables|@ip6tables", C, "removes or changes firewall rules"},
      {"flush|delete|destroy|add|insert|replace|create|-f", "@nft", C, "removes or changes firewall rules"},
      {"disable|reset|delete|deny|allow|enable|reject|limit|default|insert|route", "@ufw", C, "removes or changes firewall rules"},
      {"--remove-*|--add-*|--set-*|--reload|--complete-reload|--panic-on|--runtime-to-permanent|--new-*|--delete-*", "@firewall-cmd", C, "removes or changes firewall rules"},
      {"--vacuum-size|--vacuum-time|--vacuum-files|--rotate|--flush", "@journalctl", C, "deletes or rotates system logs"},
      {"set-*", "@timedatectl|@hostnamectl", C, "changes system settings"},
      {"** delete|del|down|flush|modify|mod|add|set|change|replace|up|connect|disconnect", "@nmcli|@ip|@ifconfig|@route", C, "changes network settings"},
    }, Store::none, Dialect::none, {}, {}, 0, true},
  };
  return k_tools;
}
// clang-format on

bool family_tool(std::string_view name) {
  for (const Tool& t : tools())
    if (in_words(t.programs, name)) return true;
  return false;
}

std::vector<FamilyCoverage> family_coverage() {
  std::vector<FamilyCoverage> out;
  for (const Tool& t : tools()) {
    auto it = std::find_if(out.begin(), out.end(), [&](const FamilyCoverage& f) { return f.family == t.family; });
    if (it == out.end()) {
      out.push_back({std::string(t.family), {}, 0});
      it = out.end() - 1;
    }
    each_word(t.programs, ' ', [&](std::string_view p) { it->programs.emplace_back(p); });
    for (const Verb& v : t.verbs) {
      if (v.verdict == V::ask) continue;
      // each alternative of the path's last word is a verb the table knows
      size_t before = it->verbs;
      std::string_view paths = v.path;
      for (size_t start = 0; start < paths.size();) {
        size_t comma = paths.find(", ", start);
        if (comma == std::string_view::npos) comma = paths.size();
        std::string_view one = paths.substr(start, comma - start);
        size_t sp = one.rfind(' ');
        std::string_view last = sp == std::string_view::npos ? one : one.substr(sp + 1);
        each_word(last, '|', [&](std::string_view) { ++it->verbs; });
        start = comma + 2;
      }
      if (it->verbs == before) ++it->verbs;  // a condition alone (`--nuke`, `@dropdb`)
    }
  }
  return out;
}
}  // namespace kai::shell
