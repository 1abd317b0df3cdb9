"""Drives the API emulator with Debian's python3-kubernetes, one step per invocation.

usage: python_client.py <kubeconfig> <namespace> <step> [resourceVersion]
Prints one JSON document with what the step observed; the Node test asserts on it.
"""
import json
import sys

from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import DynamicApiError


def main():
    kubeconfig, namespace, step = sys.argv[1:4]
    config.load_kube_config(config_file=kubeconfig)
    core = client.CoreV1Api()
    if step == 'page':
        # list with limit/continue until the server stops sending a continue token
        names, pages, token = [], 0, None
        while True:
            page = core.list_namespaced_config_map(namespace, limit=2, _continue=token)
            pages += 1
            names += [cm.metadata.name for cm in page.items]
            token = page.metadata._continue
            if not token:
                break
        print(json.dumps({'names': names, 'pages': pages}))
    elif step == 'list-rv':
        print(json.dumps({'resourceVersion': core.list_namespaced_config_map(namespace).metadata.resource_version}))
    elif step == 'watch':
        # resume from a resourceVersion; the server ends the stream after timeout_seconds
        events = []
        try:
            for event in watch.Watch().stream(
                core.list_namespaced_config_map,
                namespace,
                resource_version=sys.argv[4],
                timeout_seconds=2,
            ):
                events.append([event['type'], event['object'].metadata.name])
        except ApiException as e:
            print(json.dumps({'events': events, 'status': e.status}))
            return
        print(json.dumps({'events': events}))
    elif step == 'apply':
        # server-side apply through the dynamic client: first conflicting, then forced. The REST
        # layer sends only str bodies with a non-JSON content type, and JSON is YAML.
        api = dynamic.DynamicClient(client.ApiClient()).resources.get(api_version='v1', kind='ConfigMap')
        body = json.dumps({
            'apiVersion': 'v1',
            'kind': 'ConfigMap',
            'metadata': {'name': 'applied', 'namespace': namespace},
            'data': {'owner': 'python'},
        })
        apply = dict(body=body, name='applied', namespace=namespace, field_manager='python-client')
        try:
            api.server_side_apply(**apply)
            conflict = None
        except DynamicApiError as e:
            conflict = e.status
        forced = api.server_side_apply(**apply, force_conflicts=True)
        managers = [e.manager for e in forced.metadata.managedFields]
        print(json.dumps({'conflict': conflict, 'owner': forced.data.owner, 'managers': managers}))
    else:
        raise SystemExit(f'unknown step {step}')


main()
