-- bench/hybrid.sh: the best config of one device, its three deployments
ops { "dwave" }
param("blk", { 1 })
param("eta", { "array" })
param("twopass", { 1 })
param("ty", { 16 })
param("deploy", { "complete", "inout", "sides" })
constrain("these configs alone", function(c, dev, prob)
  local s = {}
  s["blk=1,deploy=complete,eta=array,twopass=1,ty=16"] = true
  s["blk=1,deploy=inout,eta=array,twopass=1,ty=16"] = true
  s["blk=1,deploy=sides,eta=array,twopass=1,ty=16"] = true
  local t = {}
  for _, k in ipairs({"blk", "deploy", "eta", "twopass", "ty"}) do t[#t + 1] = k .. "=" .. tostring(c[k]) end
  return s[table.concat(t, ",")] == true
end)
strategy "exhaustive"
budget(3)
default { blk = 1, eta = "array", twopass = 1, ty = 16, deploy = "complete" }
